package memstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// Prepare implements ratekit.Store, returning a store.Settler. Limits of an
// algorithm memstore cannot run (a custom one) make every decision fail.
func (s *Store) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	if err := store.CheckLimits(limits); err != nil {
		return nil, err
	}
	p := &prepared{s: s, rules: make([]rule, len(limits))}
	for i, l := range limits {
		r := &p.rules[i]
		r.limit, r.spec = l, algo.Spec(l.Spec())
		var ok bool
		if r.alg, ok = algo.Lookup(r.spec.Algorithm); ok {
			r.caps = r.alg.Caps()
		} else if p.err == nil {
			p.err = fmt.Errorf("ratekit: memstore: algorithm %q is not supported", r.spec.Algorithm)
		}
		p.caps |= r.caps
	}
	return p, nil
}

// prepared is one set of limits on a Store.
type prepared struct {
	s     *Store
	rules []rule
	caps  algo.Caps // all the rules'
	err   error     // the calls' error: an algorithm memstore cannot run
}

// A rule is one limit of a prepared set, as a call reads it.
type rule struct {
	limit ratekit.Limit
	spec  algo.Spec
	alg   algo.Algorithm // nil when p.err says so
	caps  algo.Caps
}

var _ store.Settler = (*prepared)(nil)

func (p *prepared) Take(_ context.Context, key string, cost int64) (d ratekit.Decision, err error) {
	err = p.decide(&d, key, cost, cost > 0, nil)
	return d, err
}

func (p *prepared) Peek(_ context.Context, key string) (d ratekit.Decision, err error) {
	err = p.decide(&d, key, 1, false, nil)
	return d, err
}

func (p *prepared) Reset(_ context.Context, key string) error {
	if key == "" {
		return ratekit.ErrEmptyKey
	}
	sub, sh := p.s.lock(key, p.s.clock()/1000)
	defer sh.mu.Unlock()
	for i := range p.rules {
		p.s.forget(sh, sub, p.rules[i].spec.ID)
	}
	return nil
}

// Reserve is Take, with the Receipt of an admitted charge in the Decision.
func (p *prepared) Reserve(_ context.Context, key string, cost int64) (d ratekit.Decision, err error) {
	var rc ratekit.Receipt
	err = p.decide(&d, key, cost, true, &rc)
	if rc.At != 0 { // charged
		d.Receipt = &rc
	}
	return d, err
}

// Settle moves the charge recorded by rc to cost in every limit, releases
// rc's lease, and updates rc. A refund gives back only what rc records a
// limit holds (Held, at most one quota) as far as its state still has it,
// never another call's charge; lua/settle.lua in store/redisengine mirrors it.
func (p *prepared) Settle(_ context.Context, key string, rc *ratekit.Receipt, cost int64) error {
	sub, sh, nowUS, lease, err := p.lockReceipt(key, rc, cost)
	if err != nil {
		return err
	}
	defer sh.mu.Unlock()
	rules := p.s.inForce(sh, sub, p.rules, nowUS)
	for i := range rules {
		r := &rules[i]
		_, e := live(sh.subjects[sub], r.spec.ID, nowUS/1000)
		switch {
		case r.caps&algo.Holds != 0:
			if e != nil && lease != 0 {
				r.alg.Release(e, lease)
			}
			continue
		case r.caps&algo.Settles == 0:
			continue
		}
		was, now := min(rc.Cost, r.spec.Quota), min(cost, r.spec.Quota)
		switch {
		case now < was:
			if e != nil {
				r.alg.GiveBack(&r.spec, e, &rc.Ends[i], min(was-now, rc.Held[i]), nowUS)
			}
			rc.Held[i] = max(rc.Held[i]-(was-now), 0)
		case now > was:
			next, end, held := r.alg.Extra(&r.spec, e, rc.Ends[i], rc.Held[i], now-was, nowUS)
			if e != nil || p.s.room(sh, sub, rules[i:i+1], []pending{{keep: true}}, nowUS/1000) {
				sh.setState(sub, sh.subjects[sub], r.spec.ID, &next, false)
				rc.Ends[i], rc.Held[i] = end, held
			}
		}
	}
	rc.Cost = cost
	return nil
}

// Renew extends rc's lease in every Holds limit by one lease from now, and
// reports whether every one still held it.
func (p *prepared) Renew(_ context.Context, key string, rc *ratekit.Receipt) (bool, error) {
	sub, sh, nowUS, lease, err := p.lockReceipt(key, rc, 0) // CheckReceipt checks rc, its cost included
	if err != nil {
		return false, err
	}
	defer sh.mu.Unlock()
	held := true
	for i := range p.rules {
		if r := &p.rules[i]; r.caps&algo.Holds != 0 {
			_, e := live(sh.subjects[sub], r.spec.ID, nowUS/1000)
			held = e != nil && r.alg.Renew(&r.spec, e, lease, nowUS) && held
		}
	}
	return held, nil
}

// lockReceipt checks the arguments of a Settle or Renew call, reads the
// clock and locks the subject's shard, which the caller unlocks; lease is
// rc's, 0 unless this store's.
func (p *prepared) lockReceipt(key string, rc *ratekit.Receipt, cost int64) (sub string, sh *shard, nowUS, lease int64, err error) {
	if key == "" {
		return "", nil, 0, 0, ratekit.ErrEmptyKey
	}
	if err := store.CheckCost(cost); err != nil {
		return "", nil, 0, 0, err
	}
	if err := store.CheckReceipt(rc, len(p.rules)); err != nil {
		return "", nil, 0, 0, err
	}
	lease, _ = strconv.ParseInt(rc.Lease, 10, 64)
	nowUS = p.s.clock()
	sub, sh = p.s.lock(key, nowUS/1000)
	return sub, sh, nowUS, lease, nil
}
