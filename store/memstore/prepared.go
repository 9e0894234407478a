package memstore

import (
	"context"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// Prepare implements ratekit.Store: it checks limits as one call's set and
// returns their prepared form, a store.Settler.
func (s *Store) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	if err := store.CheckLimits(limits); err != nil {
		return nil, err
	}
	p := &prepared{s: s, rules: make([]rule, len(limits))}
	for i, l := range limits {
		r := &p.rules[i]
		r.limit, r.spec = l, algo.Spec(l.Spec())
		r.alg, _ = algo.Lookup(r.spec.Algorithm) // nil for a custom algorithm: its calls fail
		r.caps = algo.Of(r.spec.Algorithm).Caps()
		p.caps |= r.caps
	}
	return p, nil
}

// prepared is one set of limits on a Store.
type prepared struct {
	s     *Store
	rules []rule
	caps  algo.Caps // all the rules'
}

// A rule is one limit of a prepared set, as a call reads it.
type rule struct {
	limit ratekit.Limit
	spec  algo.Spec
	alg   algo.Algorithm // nil: an algorithm memstore cannot run
	caps  algo.Caps
}

var _ store.Settler = (*prepared)(nil)

func (p *prepared) Take(_ context.Context, key string, cost int64) (d ratekit.Decision, err error) {
	err = p.s.decide(&d, key, p, cost, cost > 0, nil)
	return d, err
}

func (p *prepared) Peek(_ context.Context, key string) (d ratekit.Decision, err error) {
	err = p.s.decide(&d, key, p, 1, false, nil)
	return d, err
}

func (p *prepared) Reset(_ context.Context, key string) error { return p.s.reset(key, p.rules) }

// Reserve is Take, with the Receipt of an admitted charge in the Decision.
func (p *prepared) Reserve(_ context.Context, key string, cost int64) (d ratekit.Decision, err error) {
	var rc ratekit.Receipt
	err = p.s.decide(&d, key, p, cost, true, &rc)
	return d, err
}

func (p *prepared) Settle(_ context.Context, key string, rc *ratekit.Receipt, cost int64) error {
	return p.s.settle(key, p.rules, rc, cost)
}

func (p *prepared) Renew(_ context.Context, key string, rc *ratekit.Receipt) (bool, error) {
	return p.s.renew(key, p.rules, rc)
}
