package ratekit

import "time"

// A Decision is the answer to one call: whether the request may pass, and the
// numbers a client needs to behave. Headers and error bodies are built from a
// Decision alone.
type Decision struct {
	// Allowed reports whether the request may pass. When it is false nothing
	// was charged to any limit.
	Allowed bool
	// Limit is the binding limit: the one that denied (the longest wait when
	// several did), or when allowed the one with the fewest requests left.
	Limit Limit
	// Remaining is the binding limit's remaining quota after this call.
	Remaining int64
	// ResetAfter is the time until the binding limit is fully replenished.
	ResetAfter time.Duration
	// RetryAfter is, when denied, the time until a request of the same cost
	// could pass. It is 0 when allowed, and 0 when Unsatisfiable.
	RetryAfter time.Duration
	// Unsatisfiable reports a denial that no wait can cure: the cost is larger
	// than the binding limit's capacity.
	Unsatisfiable bool
	// Blocked reports a denial by a limit's penalty block (Limit.Block).
	Blocked bool
	// Delay is, when allowed by a LeakyBucket in queue mode, how long the
	// request must wait for its turn; Middleware waits it out. The longest
	// delay of all limits.
	Delay time.Duration
	// Suppression is the largest suppression factor of the call's Suppressed
	// limits: 0 when none suppresses, 1 when one is past its hard limit, in
	// between the probability with which such a call is declined.
	Suppression float64
	// States holds every limit's state, in the Limiter's order.
	States []LimitState

	policy string // RateLimit-Policy value, set by the Limiter
}

// LimitState is one limit's part of a Decision.
type LimitState struct {
	Limit         Limit
	Allowed       bool          // this limit alone would admit the request
	Remaining     int64         // quota left after this call
	ResetAfter    time.Duration // until fully replenished
	RetryAfter    time.Duration // when denied: until the same cost could pass
	Unsatisfiable bool          // the cost exceeds the limit's capacity
	Blocked       bool          // denied by the limit's penalty block
	Delay         time.Duration // queue mode: wait before handling
	Suppression   float64       // Suppressed: the suppression factor, 0 to 1
}

// Combine folds the per-limit states of one call into a Decision. The request
// passes only if every limit admits it. The binding limit is an unsatisfiable
// one if any, else the denying limit with the longest RetryAfter, else the
// limit with the fewest remaining (the longest ResetAfter on ties). Stores call
// Combine so that every store picks the binding limit the same way.
func Combine(states []LimitState) Decision {
	if len(states) == 0 {
		return Decision{}
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
	return Decision{
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
func binds(a, b LimitState) bool {
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
