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
func Combine(states []ratekit.LimitState) ratekit.Decision {
	if len(states) == 0 {
		return ratekit.Decision{}
	}
	b := 0
	allowed := states[0].Allowed
	for i := 1; i < len(states); i++ {
		allowed = allowed && states[i].Allowed
		if binds(states[i], states[b]) {
			b = i
		}
	}
	s := states[b]
	var delay time.Duration
	var suppression float64
	for _, st := range states {
		suppression = max(suppression, st.Suppression)
		if allowed {
			delay = max(delay, st.Delay)
		}
	}
	return ratekit.Decision{
		Suppression:   suppression,
		Delay:         delay,
		Blocked:       s.Blocked,
		Allowed:       allowed,
		Limit:         s.Limit,
		Remaining:     s.Remaining,
		ResetAfter:    s.ResetAfter,
		RetryAfter:    s.RetryAfter,
		Unsatisfiable: s.Unsatisfiable,
		States:        states,
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
