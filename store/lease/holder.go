package lease

import (
	"context"
	"math"
	"strings"
	"sync/atomic"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/subject"
)

// A holder is one subject's lease in this instance, and what sizes the
// next one. The fields after sem are guarded by it.
type holder struct {
	cur  atomic.Pointer[lease] // nil until the first debit
	dead atomic.Bool           // dropped by Reset or a sweep: callers start over
	sem  chan struct{}         // one refill at a time

	lastAt   int64  // clock ns of the last debit
	lastObj  *lease // the lease it added units to
	lastHeld int64  // lastObj's units right after it
	direct   bool   // the inner store fell back: ask it per call until it does not
}

// refillAttempts is how many debits a call tries (others may spend or take
// the units it aims at) before it asks the inner store for its cost alone.
const refillAttempts = 4

// holder returns key's holder, adding one when there is room; nil when the
// Store leases for as many subjects as it may.
func (s *Store) holder(key string) *holder {
	sub := subject.Key(key)
	if v, ok := s.subjects.Load(sub); ok {
		return v.(*holder)
	}
	if s.count.Load() >= s.maxSubjects {
		// Full: drop the lapsed holders, at most once per refill interval.
		now := s.clock.Nanos()
		if next := s.nextSweep.Load(); now >= next && s.nextSweep.CompareAndSwap(next, now+int64(s.interval)) {
			s.sweep(now)
		}
		if s.count.Load() >= s.maxSubjects {
			return nil
		}
	}
	h := &holder{sem: make(chan struct{}, 1)}
	v, loaded := s.subjects.LoadOrStore(strings.Clone(sub), h)
	if !loaded {
		s.count.Add(1)
	}
	return v.(*holder)
}

// refill serves a call its lease could not: under the holder's sem it
// spends what another refill added meanwhile, or debits a lease from the
// inner store and spends from it. retry: the holder was dropped meanwhile.
func (s *Store) refill(ctx context.Context, h *holder, key string, p *leased, cost int64) (d ratekit.Decision, err error, retry bool) {
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return ratekit.Decision{}, context.Cause(ctx), false
	}
	defer func() { <-h.sem }()
	for range refillAttempts {
		if h.dead.Load() {
			return ratekit.Decision{}, nil, true
		}
		if h.direct { // set only by a refill that returned
			d, err = p.Prepared.Take(ctx, key, cost)
			h.direct = err != nil || d.Fallback
			return d, err, false
		}
		now := s.clock.Nanos()
		cur := h.cur.Load()
		held, least := int64(0), int64(math.MaxInt64) // a live lease's units and least shared Remaining
		if cur.live(now) {
			if units, ok := cur.spend(cost); ok {
				return cur.decision(p.limits, nil, 0, units, now), nil, false
			}
			sh, short := cur.short(cost)
			if short {
				return cur.denial(p.limits, sh, cost, now), nil, false
			}
			held, least = cur.units.Load(), sh.left-sh.units
		} else if cur != nil && now < cur.late {
			// The window may or may not have ended: a debit might fall in
			// either, so ask at the call's own cost, stranding nothing.
			break
		}
		want := max(cost, s.size(h, cur, now)) - held
		want = max(min(want, least), cost-held) // no more than the window has left, no less than cost
		d, err = p.Prepared.Take(ctx, key, want)
		t1 := s.clock.Nanos()
		if err != nil {
			return ratekit.Decision{}, err, false
		}
		if d.Fallback {
			h.direct = true
			d, err = s.fellBack(ctx, cur, key, p, cost, want, d)
			return d, err, false
		}
		if d.Unsatisfiable || d.Blocked {
			return d, nil, false
		}
		s.record(h, cur, now, t1, &d, want, len(p.limits))
	}
	d, err = p.Prepared.Take(ctx, key, cost)
	return d, err, false
}

// fellBack answers a call of cost whose debit of want a fallback store
// answered, d (no lease: calls ask at their own cost until the primary is
// back): refused, it asks at cost; admitted below cost, the rest comes from
// cur's units, or else from the fallback store again.
func (s *Store) fellBack(ctx context.Context, cur *lease, key string, p *leased, cost, want int64, d ratekit.Decision) (ratekit.Decision, error) {
	switch {
	case !d.Allowed && want > cost:
		return p.Prepared.Take(ctx, key, cost)
	case d.Allowed && want < cost:
		if _, ok := cur.spend(cost - want); !ok {
			return p.Prepared.Take(ctx, key, cost-want)
		}
	}
	return d, nil
}

// record keeps what a debit of want units asked at t0 answered: the units
// it admitted, and the shared Remaining and window ends either way. In the
// window of cur they join cur; in a new window they make a new lease, and
// what cur held lapses.
func (s *Store) record(h *holder, cur *lease, t0, t1 int64, d *ratekit.Decision, want int64, n int) {
	units := int64(0)
	if d.Allowed {
		units = want
		s.leases.Add(1)
		s.taken.Add(want)
	}
	l := newLease(d, n, t0, t1, s.margin, units)
	held := units
	if cur.live(t0) && cur.sameWindows(l, int64(s.minWindow/2)) {
		// (A later window ends a whole window later.) Units before the
		// Remaining: no reader sees the lower Remaining without its units.
		l, held = cur, cur.units.Add(units)
		cur.setRemaining(d)
	} else {
		h.cur.Store(l)
		if cur != nil {
			s.lapsed.Add(cur.units.Swap(0))
		}
	}
	if units > 0 {
		h.lastObj, h.lastHeld, h.lastAt = l, held, t1
	}
	// A Reset that dropped h meanwhile swaps h's lease empty before or
	// after this check: no unit of a dropped holder stays spendable.
	if h.dead.Load() {
		s.dropped.Add(l.units.Swap(0))
	}
}

// drop marks h, just removed from the subjects, dead, and counts its units
// in units.
func (s *Store) drop(h *holder, units *atomic.Int64) {
	s.count.Add(-1)
	h.dead.Store(true)
	if l := h.cur.Load(); l != nil {
		units.Add(l.units.Swap(0))
	}
}

// size is the lease the holder's observed rate calls for at now: the units
// spent since its last debit, per the time since, over the refill interval
// or the time left in the window when less; 1 to MaxLease, and 1 at first.
func (s *Store) size(h *holder, cur *lease, now int64) int64 {
	if h.lastObj == nil {
		return 1
	}
	spent := max(h.lastHeld-h.lastObj.units.Load(), 0)
	span := float64(s.interval)
	if cur.live(now) {
		span = math.Min(span, float64(cur.until-now))
	}
	elapsed := now - h.lastAt
	if elapsed <= 0 {
		return s.maxLease
	}
	n := math.Ceil(float64(spent) * span / float64(elapsed))
	return int64(max(min(n, float64(s.maxLease)), 1))
}

// forget drops sub's holder and the units it holds.
func (s *Store) forget(sub string) {
	if v, ok := s.subjects.LoadAndDelete(sub); ok {
		s.drop(v.(*holder), &s.dropped)
	}
}

// sweep drops the holders whose leases have lapsed at now and that no call
// is refilling, counting their units as lapsed.
func (s *Store) sweep(now int64) {
	s.subjects.Range(func(k, v any) bool {
		h := v.(*holder)
		if h.cur.Load().live(now) {
			return true
		}
		select {
		case h.sem <- struct{}{}:
		default:
			return true // a refill is under way
		}
		if !h.cur.Load().live(now) && s.subjects.CompareAndDelete(k, h) {
			s.drop(h, &s.lapsed)
		}
		<-h.sem
		return true
	})
}

// Stats is what a Store has leased, for metrics. It is a plain value.
type Stats struct {
	// Leases is the number of debits that took units from the inner
	// store, and Taken the units they took.
	Leases, Taken int64
	// Lapsed is the units whose window ended before this instance spent
	// them; Dropped the units Reset discarded.
	Lapsed, Dropped int64
	// Held is the units held now in live leases, across subjects: what
	// this instance could admit without asking the inner store. Subjects
	// is the number of subjects with a live lease.
	Held     int64
	Subjects int
}

// Spent returns the units admitted from leases: taken less lapsed, dropped
// and held.
func (st Stats) Spent() int64 { return st.Taken - st.Lapsed - st.Dropped - st.Held }

// Stats reports what the Store has leased, after dropping the subjects whose
// leases have lapsed (counting their units in Lapsed). It is safe for
// concurrent use; the figures are read one after another, not as a snapshot.
func (s *Store) Stats() Stats {
	now := s.clock.Nanos()
	s.sweep(now)
	var st Stats
	s.subjects.Range(func(_, v any) bool {
		if l := v.(*holder).cur.Load(); l.live(now) {
			st.Held += l.units.Load()
			st.Subjects++
		}
		return true
	})
	st.Leases, st.Taken, st.Lapsed, st.Dropped = s.leases.Load(), s.taken.Load(), s.lapsed.Load(), s.dropped.Load()
	return st
}
