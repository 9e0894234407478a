package memstore

import (
	"context"
	"slices"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// Prepare implements ratekit.Store: it checks limits as one call's set and
// returns their prepared form, a store.Settler.
func (s *Store) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	if err := store.CheckLimits(limits); err != nil {
		return nil, err
	}
	return &prepared{s: s, limits: slices.Clone(limits)}, nil
}

// prepared is one set of limits on a Store.
type prepared struct {
	s      *Store
	limits []ratekit.Limit
}

var _ store.Settler = (*prepared)(nil)

func (p *prepared) Take(_ context.Context, key string, cost int64) (d ratekit.Decision, err error) {
	err = p.s.decide(&d, key, p.limits, cost, cost > 0, nil)
	return d, err
}

func (p *prepared) Peek(_ context.Context, key string) (d ratekit.Decision, err error) {
	err = p.s.decide(&d, key, p.limits, 1, false, nil)
	return d, err
}

func (p *prepared) Reset(_ context.Context, key string) error { return p.s.reset(key, p.limits) }

// Reserve is Take, with the Receipt of an admitted charge in the Decision.
func (p *prepared) Reserve(_ context.Context, key string, cost int64) (d ratekit.Decision, err error) {
	var rc ratekit.Receipt
	err = p.s.decide(&d, key, p.limits, cost, true, &rc)
	return d, err
}

func (p *prepared) Settle(_ context.Context, key string, rc *ratekit.Receipt, cost int64) error {
	return p.s.settle(key, p.limits, rc, cost)
}

func (p *prepared) Renew(_ context.Context, key string, rc *ratekit.Receipt) (bool, error) {
	return p.s.renew(key, p.limits, rc)
}
