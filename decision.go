package ratekit

import "time"

// A Decision is the answer to one call: whether the request may pass, and the
// numbers a client needs to behave. Headers and error bodies are built from a
// Decision alone. The zero Decision denies nothing and describes no limit;
// stores build Decisions with store.Combine.
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
	// EffectiveWindow is, when not zero, the time within which no more than
	// Remaining requests can pass. Stores set it where Remaining and
	// ResetAfter do not imply it (SlidingWindow, SlidingLog); the RateLimit
	// header derives it from them otherwise.
	EffectiveWindow time.Duration
	// Unsatisfiable reports a denial that no wait can cure: the cost is larger
	// than the binding limit's capacity.
	Unsatisfiable bool
	// Blocked reports a denial by a limit's penalty block (Limit.Block).
	Blocked bool
	// Delay is, when a LeakyBucket in queue mode admits, the longest wait of
	// all limits for the request's turn; Middleware waits it out.
	Delay time.Duration
	// Suppression is the largest suppression factor of the call's Suppressed
	// limits: 0 when none suppresses, 1 when one is past its hard limit, in
	// between the probability with which such a call is declined.
	Suppression float64
	// ShadowDenied reports that a limit in shadow mode (Limit.Shadow) would
	// have refused the request. It does not change Allowed.
	ShadowDenied bool
	// Fallback reports a decision made by a fallback store while the primary
	// store was unavailable (store/fallback).
	Fallback bool
	// Cached reports a denial answered in-process, without asking the
	// store: by a local deny cache (store/denycache), or by the Limiter's
	// count of in-flight requests (see InFlight).
	Cached bool
	// Receipt is what the store charged a call admitted by Limiter.Reserve
	// (or a Store's Reserve), kept to settle it later; nil otherwise.
	Receipt *Receipt
	// States holds every limit's state, in the Limiter's order (beside
	// shadow limits, the enforced ones'), when the call had more than one
	// limit. It is nil when the call had one, or was refused by the count
	// of in-flight requests (Cached): the Decision's own fields are then
	// that limit's state.
	States []LimitState

	policy string // RateLimit-Policy value, set by the Limiter
	shadow Limit  // the shadow limit that would have refused, if any
}

// LimitState is one limit's part of a Decision: what that limit alone says.
// It is a plain value; the zero LimitState describes no limit.
type LimitState struct {
	Limit      Limit
	Allowed    bool          // this limit alone would admit the request
	Remaining  int64         // quota left after this call
	ResetAfter time.Duration // until fully replenished
	RetryAfter time.Duration // when denied: until the same cost could pass
	// EffectiveWindow, when not zero: until Remaining grows (see Decision)
	EffectiveWindow time.Duration
	Unsatisfiable   bool          // the cost exceeds the limit's capacity
	Blocked         bool          // denied by the limit's penalty block
	Delay           time.Duration // queue mode: wait before handling
	Suppression     float64       // Suppressed: the suppression factor, 0 to 1
}

// states returns d's per-limit states: d.States, or for a decision about one
// limit (States nil) that limit's state, built from d's fields in *one. A
// Decision that describes no limit has none.
func (d *Decision) states(one *[1]LimitState) []LimitState {
	if d.States != nil || d.Limit.d == nil {
		return d.States
	}
	one[0] = LimitState{
		Limit:           d.Limit,
		Allowed:         d.Allowed,
		Remaining:       d.Remaining,
		ResetAfter:      d.ResetAfter,
		RetryAfter:      d.RetryAfter,
		EffectiveWindow: d.EffectiveWindow,
		Unsatisfiable:   d.Unsatisfiable,
		Blocked:         d.Blocked,
		Delay:           d.Delay,
		Suppression:     d.Suppression,
	}
	return one[:]
}
