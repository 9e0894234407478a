package lease

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/internal/elapsed"
	"github.com/ratekit/ratekit/internal/subject"
)

// Store is a ratekit.Store that takes the quota of its leased limits from
// an inner store in leases and spends them in process; calls with other
// limits go to the inner store (see Prepare).
//
// The zero value is not usable: build a Store with New. A Store is safe for
// concurrent use; it starts no goroutine and needs no Close.
type Store struct {
	inner     ratekit.Store
	ids       []string       // the leased limits' Spec().ID, in order
	specs     []ratekit.Spec // the leased limits' Spec(), in order
	minQuota  int64
	minWindow time.Duration
	config
	clock elapsed.Clock // WithClock, or the monotonic clock; counts from New

	subjects  sync.Map // subject.Key(key) -> *holder
	count     atomic.Int64
	nextSweep atomic.Int64 // the Store's clock (ns) before which a full Store does not sweep again

	leases, taken, lapsed, dropped atomic.Int64
}

var _ ratekit.Store = (*Store)(nil)

// New returns a Store that leases limits, a Limiter's limits in its order,
// from inner (the store every instance shares). It reports every limit that
// is not a FixedWindow or Calendar limit without a penalty block, a nil
// store and bad options,
// each saying how to fix it.
func New(inner ratekit.Store, limits []ratekit.Limit, opts ...Option) (*Store, error) {
	s := &Store{inner: inner, config: config{interval: DefaultRefillInterval, margin: DefaultMargin, maxSubjects: DefaultMaxSubjects}}
	for _, o := range opts {
		o.apply(&s.config)
	}
	errs := s.errs
	if inner == nil {
		errs = append(errs, errors.New("ratekit: lease: the inner store is nil; pass the store the instances share, e.g. a redisstore.Store"))
	}
	if _, err := ratekit.New(unused{}, limits...); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, checkLeasable(limits)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s.clock = elapsed.New(s.now)
	s.minQuota, s.minWindow = math.MaxInt64, math.MaxInt64
	for _, l := range limits {
		sp := l.Spec()
		s.ids, s.specs = append(s.ids, sp.ID), append(s.specs, sp)
		s.minQuota, s.minWindow = min(s.minQuota, sp.Quota), min(s.minWindow, sp.Window)
	}
	switch {
	case s.maxLease == 0:
		s.maxLease = max(s.minQuota/100, 1)
	case s.maxLease > s.minQuota:
		return nil, fmt.Errorf("ratekit: lease: WithMaxLease(%d) exceeds the smallest quota, %d; a lease can hold at most a window's quota", s.maxLease, s.minQuota)
	}
	return s, nil
}

// checkLeasable reports the limits a lease cannot keep exact.
func checkLeasable(limits []ratekit.Limit) []error {
	var errs []error
	for _, l := range limits {
		sp := l.Spec()
		switch {
		case algo.Of(sp.Algorithm).Caps()&algo.Leasable == 0:
			errs = append(errs, fmt.Errorf("ratekit: lease: limit %q is %s, which a lease cannot keep exact: units debited at one instant and "+
				"spent later would pass bursts that a sliding window or a bucket refuses; lease FixedWindow or Calendar limits only, "+
				"and give this one to a Limiter on the inner store", sp.Name, sp.Algorithm))
		case sp.Block > 0:
			errs = append(errs, fmt.Errorf("ratekit: lease: limit %q has a penalty block, which a lease's refused debit would start "+
				"for every instance; lease it without Block", sp.Name))
		}
	}
	return errs
}

// MaxLease returns the most units one lease holds: WithMaxLease's, or its
// default. An instance holds at most this many units per subject.
func (s *Store) MaxLease() int64 { return s.maxLease }

// Prepare implements ratekit.Store. The leased limits, in order and with
// their numbers, get a form that answers from leases; other limits (the
// leased ones with other numbers too, which share their counters) get the
// inner store's form, a store.Settler when theirs is and they name no
// leased limit.
func (s *Store) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	inner, err := s.inner.Prepare(limits)
	if err != nil {
		return nil, err
	}
	switch {
	case slices.EqualFunc(limits, s.specs, func(l ratekit.Limit, sp ratekit.Spec) bool { return l.Spec() == sp }):
		return &leased{sharing{inner, s}, slices.Clone(limits)}, nil
	case slices.ContainsFunc(limits, func(l ratekit.Limit) bool { return slices.Contains(s.ids, l.Spec().ID) }):
		return &sharing{inner, s}, nil
	}
	return inner, nil
}

// sharing is limits that include a leased limit, prepared: their calls go
// to the inner store's form, and a Reset drops the lease too.
type sharing struct {
	ratekit.Prepared
	s *Store
}

// Reset drops this instance's lease of key, resets the inner store, and
// drops the lease a call made meanwhile. Other instances spend theirs.
func (p *sharing) Reset(ctx context.Context, key string) error {
	sub := subject.Key(key)
	p.s.forget(sub)
	err := p.Prepared.Reset(ctx, key)
	p.s.forget(sub)
	return err
}

// leased is the leased limits, prepared.
type leased struct {
	sharing
	limits []ratekit.Limit
}

// Take answers a call of cost 1 to the smallest quota from the subject's
// lease, refuses it when neither the lease nor what the shared window is
// known to have left can cover it, or else leases; other calls go to the
// inner store.
func (p *leased) Take(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	s := p.s
	if key == "" || cost < 1 || cost > s.minQuota {
		return p.Prepared.Take(ctx, key, cost)
	}
	for {
		h := s.holder(key)
		if h == nil {
			return p.Prepared.Take(ctx, key, cost)
		}
		now := s.clock.Nanos()
		if l := h.cur.Load(); l.live(now) {
			if units, ok := l.spend(cost); ok {
				return l.decision(p.limits, nil, 0, units, now), nil
			}
			if sh, short := l.short(cost); short {
				return l.denial(p.limits, sh, cost, now), nil
			}
		}
		d, err, retry := s.refill(ctx, h, key, p, cost)
		if !retry {
			return d, err
		}
	}
}

// Peek answers without a store call when the lease holds a unit or the
// window is known to be spent; else the inner store does.
func (p *leased) Peek(ctx context.Context, key string) (ratekit.Decision, error) {
	if v, ok := p.s.subjects.Load(subject.Key(key)); ok {
		now := p.s.clock.Nanos()
		if l := v.(*holder).cur.Load(); l.live(now) {
			if sh, short := l.short(1); short {
				return l.denial(p.limits, sh, 1, now), nil
			} else if sh.units >= 1 {
				return l.decision(p.limits, nil, 0, sh.units, now), nil
			}
		}
	}
	return p.Prepared.Peek(ctx, key)
}

// unused lets New validate limits with ratekit.New without using inner.
type unused struct{}

func (unused) Prepare([]ratekit.Limit) (ratekit.Prepared, error) { return nil, nil }
