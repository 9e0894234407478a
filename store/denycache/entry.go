package denycache

import (
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// An entry is one cached denial: the store's Decision for a subject, a limit
// set and a cost, as numbers and the limits in force (the call's own, or
// copies with an override's numbers). Entries are immutable once stored.
type entry struct {
	start   int64 // the cache's clock (ns) read before the store call
	until   int64 // the cache answers while its clock reads less
	cost    int64 // the cost that was denied
	binding int   // the index of the binding limit
	blocked bool  // Decision.Blocked: every cost is denied until until
	states  []state
}

// state is what an entry keeps of one limit's LimitState.
type state struct {
	limit                          ratekit.Limit // as the store reported it: the numbers in force
	remaining                      int64
	resetAfter, retryAfter, window time.Duration
	allowed, blocked               bool
}

// newEntry returns the entry for d, the store's answer to a call of cost
// with the limits of set, asked at start (the cache's clock before the
// call); ok is false when d is not a denial the cache may repeat. It lasts
// until start + RetryAfter − margin (the store decided after start), or
// until a limit's EffectiveWindow or the first penalty block ends if sooner
// (every block of the set must be in force).
func newEntry(set *limitSet, d ratekit.Decision, cost, start int64, margin time.Duration) (e entry, ok bool) {
	states := d.States
	if len(states) == 0 && len(set.ids) == 1 { // one limit: the Decision is its state
		states = []ratekit.LimitState{{Limit: d.Limit, Allowed: d.Allowed, Remaining: d.Remaining,
			ResetAfter: d.ResetAfter, RetryAfter: d.RetryAfter, EffectiveWindow: d.EffectiveWindow, Blocked: d.Blocked}}
	}
	if d.Allowed || d.Unsatisfiable || d.Fallback || d.RetryAfter <= 0 || len(states) != len(set.ids) {
		return entry{}, false
	}
	e = entry{start: start, cost: cost, binding: -1, blocked: d.Blocked, states: make([]state, len(states))}
	wait := d.RetryAfter
	bound := d.Limit.Spec().ID
	for i, st := range states {
		id := st.Limit.Spec().ID
		if id != set.ids[i] || st.Unsatisfiable {
			return entry{}, false
		}
		if id == bound {
			e.binding = i
		}
		e.states[i] = state{limit: st.Limit, remaining: st.Remaining, resetAfter: st.ResetAfter, retryAfter: st.RetryAfter,
			window: st.EffectiveWindow, allowed: st.Allowed, blocked: st.Blocked}
		if st.EffectiveWindow > 0 { // Remaining grows then: the recorded one would be stale
			wait = min(wait, st.EffectiveWindow)
		}
	}
	for _, i := range set.blocks {
		if !states[i].Blocked {
			return entry{}, false
		}
		wait = min(wait, states[i].RetryAfter)
	}
	if wait -= margin; wait <= 0 || e.binding < 0 {
		return entry{}, false
	}
	e.until = start + int64(wait)
	return e, true
}

// serves reports whether e answers a request of cost at now. A request of
// a smaller cost might pass sooner, so it goes to the store unless e is a
// block, which denies every cost. A larger cost is denied at least as long
// (every algorithm's wait grows with the cost); the caller sends a cost
// above the set's smallest quota, which is unsatisfiable, to the store.
func (e *entry) serves(cost, now int64) bool {
	return now < e.until && (cost >= e.cost || e.blocked)
}

// covers reports whether e answers every cost that o answers.
func (e *entry) covers(o entry) bool {
	return e.blocked || (!o.blocked && e.cost <= o.cost)
}

// decision returns e as the Decision for a call at now: the store's
// numbers with RetryAfter and ResetAfter reduced by the time since the
// store was asked, Remaining as recorded, the limits in force as the store
// reported them (an override's numbers show), and Cached set.
func (e *entry) decision(now int64) ratekit.Decision {
	elapsed := time.Duration(now - e.start)
	d := store.Single(e.state(e.binding, elapsed))
	if len(e.states) > 1 { // one limit: no States slice, as the stores answer
		d.States = make([]ratekit.LimitState, len(e.states))
		for i := range e.states {
			d.States[i] = e.state(i, elapsed)
		}
	}
	d.Allowed, d.Blocked, d.Cached = false, e.blocked, true
	return d
}

// state is limit i's state, its waits reduced by elapsed; a limit whose own
// wait has run out reports that it admits.
func (e *entry) state(i int, elapsed time.Duration) ratekit.LimitState {
	st := e.states[i]
	ls := ratekit.LimitState{
		Limit:           st.limit,
		Allowed:         st.allowed,
		Remaining:       st.remaining,
		ResetAfter:      max(st.resetAfter-elapsed, 0),
		RetryAfter:      max(st.retryAfter-elapsed, 0),
		EffectiveWindow: max(st.window-elapsed, 0),
		Blocked:         st.blocked,
	}
	if !ls.Allowed && ls.RetryAfter == 0 {
		ls.Allowed, ls.Blocked = true, false
	}
	return ls
}
