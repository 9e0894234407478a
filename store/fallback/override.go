package fallback

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

var _ store.Overrider = (*Store)(nil)

// SetOverride sets the override in the primary store, which holds the
// overrides every instance reads; while the primary is unavailable it
// fails, and the fallback store decides on the limits' own shares.
func (s *Store) SetOverride(ctx context.Context, subject string, l ratekit.Limit, expiry time.Duration) error {
	o, err := s.overrider()
	if err != nil {
		return err
	}
	return o.SetOverride(ctx, subject, l, expiry)
}

// ClearOverride clears the override in the primary store.
func (s *Store) ClearOverride(ctx context.Context, subject string, l ratekit.Limit) error {
	o, err := s.overrider()
	if err != nil {
		return err
	}
	return o.ClearOverride(ctx, subject, l)
}

// ListOverrides lists the primary store's overrides.
func (s *Store) ListOverrides(ctx context.Context, subject string, limits []ratekit.Limit, f func(string, ratekit.Limit, time.Time)) error {
	o, err := s.overrider()
	if err != nil {
		return err
	}
	return o.ListOverrides(ctx, subject, limits, f)
}

func (s *Store) overrider() (store.Overrider, error) {
	if o, ok := s.primary.(store.Overrider); ok {
		return o, nil
	}
	return nil, fmt.Errorf("%w: fallback: the primary store (%T) holds no overrides", ratekit.ErrInvalidLimit, s.primary)
}
