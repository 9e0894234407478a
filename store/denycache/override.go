package denycache

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/store"
)

var _ store.Overrider = (*Store)(nil)

// SetOverride sets the override in the inner store and drops this
// instance's cached denials of subject by the limit, which were decided on
// other numbers. Other instances' caches keep theirs until they end (at
// most their RetryAfter): docs/architecture.md, "Overrides".
func (s *Store) SetOverride(ctx context.Context, sub string, l ratekit.Limit, expiry time.Duration) error {
	o, err := s.overrider()
	if err != nil {
		return err
	}
	s.forgetLimit(sub, l.Spec().ID)
	return o.SetOverride(ctx, sub, l, expiry)
}

// ClearOverride clears the override in the inner store and drops this
// instance's cached denials of subject by the limit.
func (s *Store) ClearOverride(ctx context.Context, sub string, l ratekit.Limit) error {
	o, err := s.overrider()
	if err != nil {
		return err
	}
	s.forgetLimit(sub, l.Spec().ID)
	return o.ClearOverride(ctx, sub, l)
}

// ListOverrides lists the inner store's overrides.
func (s *Store) ListOverrides(ctx context.Context, sub string, limits []ratekit.Limit, f func(string, ratekit.Limit, time.Time)) error {
	o, err := s.overrider()
	if err != nil {
		return err
	}
	return o.ListOverrides(ctx, sub, limits, f)
}

func (s *Store) overrider() (store.Overrider, error) {
	if o, ok := s.inner.(store.Overrider); ok {
		return o, nil
	}
	return nil, fmt.Errorf("%w: denycache: the store it wraps (%T) holds no overrides", ratekit.ErrInvalidLimit, s.inner)
}

// forgetLimit drops key's entries for every set with the limit id, and
// stops the denials asked for before from being recorded.
func (s *Store) forgetLimit(key, id string) {
	sub := subject.Key(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	for _, set := range s.sets {
		if slices.Contains(set.ids, id) {
			delete(s.entries, entryKey{sub, set})
		}
	}
}
