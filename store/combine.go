package store

import (
	"time"

	"github.com/ratekit/ratekit"
)

// Combine folds the per-limit states of one call into a Decision. The request
// passes only if every limit admits it. The binding limit is an unsatisfiable
// one if any, else the denying limit with the longest RetryAfter, else the
// limit with the fewest remaining (the longest ResetAfter on ties). Stores
// call Combine so that every store picks the binding limit the same way.
//
// The Decision keeps states as its States when there are several; for one
// state it is Single's, with States nil.
func Combine(states []ratekit.LimitState) ratekit.Decision {
	switch len(states) {
	case 0:
		return ratekit.Decision{}
	case 1:
		return Single(states[0])
	}
	b, allowed := 0, true
	var delay time.Duration
	var suppression float64
	for i, st := range states {
		allowed = allowed && st.Allowed
		delay = max(delay, st.Delay)
		suppression = max(suppression, st.Suppression)
		if binds(st, states[b]) {
			b = i
		}
	}
	if !allowed {
		delay = 0 // only an admitted request waits
	}
	d := Single(states[b])
	d.Allowed, d.Delay, d.Suppression, d.States = allowed, delay, suppression, states
	return d
}

// Single is the Decision of a call with one limit, whose state is st: its
// fields are st's and its States is nil. A store that decides one limit
// calls Single rather than Combine so that its states need not outlive the
// call (Combine keeps them).
func Single(st ratekit.LimitState) ratekit.Decision {
	return ratekit.Decision{
		Suppression:     st.Suppression,
		Delay:           st.Delay,
		Blocked:         st.Blocked,
		Allowed:         st.Allowed,
		Limit:           st.Limit,
		Remaining:       st.Remaining,
		ResetAfter:      st.ResetAfter,
		RetryAfter:      st.RetryAfter,
		EffectiveWindow: st.EffectiveWindow,
		Unsatisfiable:   st.Unsatisfiable,
	}
}

// binds reports whether a is more binding than b.
func binds(a, b ratekit.LimitState) bool {
	if a.Allowed != b.Allowed {
		return !a.Allowed
	}
	if !a.Allowed {
		if a.Unsatisfiable != b.Unsatisfiable {
			return a.Unsatisfiable
		}
		return a.RetryAfter > b.RetryAfter
	}
	if a.Remaining != b.Remaining {
		return a.Remaining < b.Remaining
	}
	return a.ResetAfter > b.ResetAfter
}
