package lease

import (
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// A lease is the units one instance holds for one subject in one shared
// window, and what the shared store said about that window. Only units and
// rem change: units atomically, rem by the refills of the same window.
type lease struct {
	units atomic.Int64   // unspent units
	until int64          // clock ns: units are spent only before it
	late  int64          // clock ns: from it the earliest-ending window has surely ended
	ends  []int64        // per limit: clock ns at which its shared window ends, or noWindow
	rem   []atomic.Int64 // per limit: the shared Remaining after the last debit or denial
}

// noWindow is the end of a limit whose window a refused debit found lapsed
// or not started (ResetAfter 0): it bounds nothing (see sameWindows), and a
// lease of such limits only is never live.
const noWindow = int64(-1 << 63)

// newLease returns a lease of units from d, the decision about n limits
// asked between clock readings t0 and t1: each window ends between t0 and t1
// plus its ResetAfter; units are spent until the earliest end less margin.
func newLease(d *ratekit.Decision, n int, t0, t1 int64, margin time.Duration, units int64) *lease {
	l := &lease{ends: make([]int64, n), rem: make([]atomic.Int64, n)}
	l.until, l.late = int64(1<<63-1), int64(1<<63-1)
	for i := range n {
		ra := d.ResetAfter
		if d.States != nil {
			ra = d.States[i].ResetAfter
		}
		if ra <= 0 && units == 0 {
			l.ends[i] = noWindow
			continue
		}
		l.ends[i] = t0 + int64(ra)
		l.until = min(l.until, l.ends[i]-int64(margin))
		l.late = min(l.late, t1+int64(ra))
	}
	if l.late == int64(1<<63-1) {
		l.until, l.late = t0, t0
	}
	l.setRemaining(d)
	l.units.Store(units)
	return l
}

// setRemaining records the shared Remaining of every limit from d.
func (l *lease) setRemaining(d *ratekit.Decision) {
	if d.States == nil {
		l.rem[0].Store(d.Remaining)
		return
	}
	for i := range l.rem {
		l.rem[i].Store(d.States[i].Remaining)
	}
}

// sameWindows reports whether next, a debit's lease, is of l's windows:
// every limit has a window in both, ending before l's end plus tolerance
// (ends are estimated from below), or in neither. A window started since l
// was made needs a new lease: l's units would be spent past its end.
func (l *lease) sameWindows(next *lease, tolerance int64) bool {
	for i, end := range l.ends {
		switch e := next.ends[i]; {
		case end == noWindow || e == noWindow:
			if end != e {
				return false
			}
		case e >= end+tolerance:
			return false
		}
	}
	return true
}

// live reports whether the lease may be spent at now.
func (l *lease) live(now int64) bool { return l != nil && now < l.until }

// spend takes cost units if the lease holds them and returns the units
// left. A nil lease holds none.
func (l *lease) spend(cost int64) (int64, bool) {
	if l == nil {
		return 0, false
	}
	for {
		u := l.units.Load()
		if u < cost {
			return u, false
		}
		if l.units.CompareAndSwap(u, u-cost) {
			return u - cost, true
		}
	}
}

// A shortage is what short read: the units held, the limit with the least
// shared Remaining, and units plus that Remaining. A denial is built from
// it, never from a later reading (a refill's, an admission's).
type shortage struct {
	units int64
	limit int
	left  int64
}

// short reports whether cost can pass neither on the units held nor on
// what the shared window had left when last asked. It reads the Remaining
// before the units, the opposite of a refill (see record).
func (l *lease) short(cost int64) (shortage, bool) {
	least, at := l.rem[0].Load(), 0
	for i := 1; i < len(l.rem); i++ {
		if r := l.rem[i].Load(); r < least {
			least, at = r, i
		}
	}
	u := l.units.Load()
	return shortage{units: u, limit: at, left: u + least}, u+least < cost
}

// denial is the Decision of a call of cost that short found sh for: sh's
// limit refuses it, and so does any other that cost cannot pass.
func (l *lease) denial(limits []ratekit.Limit, sh shortage, cost, now int64) ratekit.Decision {
	return l.decision(limits, &sh, cost, sh.units, now)
}

// decision is the Decision of a call of cost at now, with units left: each
// limit reports its last shared Remaining plus units, and its window's end;
// it is a denial when sh (see denial) is set, else an admission.
func (l *lease) decision(limits []ratekit.Limit, sh *shortage, cost, units, now int64) ratekit.Decision {
	if len(limits) == 1 {
		return store.Single(l.state(limits[0], 0, sh, cost, units, now))
	}
	states := make([]ratekit.LimitState, len(limits))
	for i, lim := range limits {
		states[i] = l.state(lim, i, sh, cost, units, now)
	}
	return store.Combine(states)
}

// state is limit i's part of decision.
func (l *lease) state(lim ratekit.Limit, i int, sh *shortage, cost, units, now int64) ratekit.LimitState {
	left := time.Duration(0)
	if l.ends[i] != noWindow {
		left = time.Duration(max(l.ends[i]-now, 0))
	}
	st := ratekit.LimitState{Limit: lim, Allowed: true, Remaining: l.rem[i].Load() + units, ResetAfter: left}
	if sh == nil {
		return st
	}
	if i == sh.limit {
		st.Remaining = sh.left
	}
	if i == sh.limit || st.Remaining < cost {
		st.Allowed, st.RetryAfter = false, max(left, time.Microsecond)
	}
	return st
}
