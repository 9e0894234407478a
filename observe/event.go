package observe

import (
	"context"
	"time"
)

// Outcome is what a decision came to. The zero value is Allowed.
type Outcome uint8

// Outcomes.
const (
	// Allowed: the request passed its limits.
	Allowed Outcome = iota
	// Denied: a limit refused the request (a 429).
	Denied
	// ShadowDenied: a limit in shadow mode (ratekit.Limit.Shadow) would have
	// refused the request; it passed.
	ShadowDenied
	// Error: the store failed or ran out of time; the error policy decided
	// what the request got (by default it passed).
	Error
	// Invalid: the request had no usable key or cost; it reached no store.
	Invalid
	// Released is not a decision: a request admitted earlier gave back the
	// InFlight slots it held (Event.Held), as its handler ended, or they
	// lapsed. Metrics count it in no decision series.
	Released
)

var outcomeNames = [...]string{"allowed", "denied", "shadow_denied", "error", "invalid", "released"} // by Outcome

// String returns the outcome's label: "allowed", "denied", "shadow_denied",
// "error", "invalid" or "released" ("unknown" for any other value).
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// An Event describes one decision. It is a plain value; an Observer may
// keep it. The zero Event is an allowed decision about no policy.
type Event struct {
	// Outcome is what the decision came to.
	Outcome Outcome
	// Policy names the binding limit: the one that denied, or when allowed
	// the one with the fewest requests left; for a lockout, its name. When
	// no store decided (Error, Invalid) it lists the policies the call was
	// for, separated by commas. Policy names come from configuration, so
	// they are safe as metric labels.
	Policy string
	// Quota and Remaining are the binding limit's quota and what it has left
	// after this call; both 0 when no store decided.
	Quota, Remaining int64
	// Cost is what the request was charged (or would have been).
	Cost int64
	// Latency is the time the store took to answer; 0 when none was asked.
	Latency time.Duration
	// Fallback reports a decision made by a fallback store while the
	// primary store was unavailable (store/fallback).
	Fallback bool
	// Cached reports a denial answered in-process without asking the store,
	// by a local deny cache (store/denycache) or by a Limiter whose
	// instance already has as many of the subject's requests in flight as
	// an InFlight limit allows; Latency is then the local answer's.
	Cached bool
	// Held names the InFlight limits (ratekit.InFlight) whose slots the
	// request took, on the event that admitted it (Allowed, or
	// ShadowDenied: a shadow limit would have refused, the request passed
	// and holds its slots), or gave back, on a Released one, separated by
	// commas; "" when none. Metrics keep the slots in use per name (see
	// HeldDelta).
	Held string
	// Subject is the key the decision was about: an IP, an account, a
	// tenant. It is personal data: never use it as a metric label, and log
	// it only where that is allowed.
	Subject string
	// Err is the error behind an Error or Invalid outcome. It may hold
	// internal detail: log it, never show it to clients.
	Err error
}

// FallbackActive reports what e does to a fallback-active gauge, the rule
// the metrics modules share. A decision a store made (Allowed, Denied,
// ShadowDenied) sets it (set is true): to 1 when a fallback store made it,
// else to 0. An Error, an Invalid request or an outcome this version does
// not know decided nothing and leaves the gauge as it was (set is false).
func (e Event) FallbackActive() (value int64, set bool) {
	switch e.Outcome {
	case Allowed, Denied, ShadowDenied:
		if e.Fallback {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// HeldDelta reports what e does to the slots in use of each InFlight limit
// named in e.Held, the rule the metrics modules share: -1 on a Released
// event, +1 on any other (the admission that took them), 0 when Held is
// empty.
func (e Event) HeldDelta() int64 {
	switch {
	case e.Held == "":
		return 0
	case e.Outcome == Released:
		return -1
	}
	return 1
}

// NearLimit reports an allowed decision whose binding limit has at most a
// fifth of its quota left, as envoy's ratelimit service counts "near limit".
func (e Event) NearLimit() bool {
	return e.Outcome == Allowed && e.Quota > 0 && e.Remaining*5 <= e.Quota
}

// An Observer receives every decision of the paths it is given to
// (ratekit.WithObserver, lockout.Config.Observer). Observe is called on the
// request's goroutine, after the decision and before the response is
// written, by concurrent requests: it must be safe for concurrent use and
// quick (count, or hand off). ctx is the request's context.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// Func is an Observer made of a function.
type Func func(ctx context.Context, e Event)

// Observe calls f(ctx, e).
func (f Func) Observe(ctx context.Context, e Event) { f(ctx, e) }

// Join returns an Observer that hands every Event to each of obs in turn;
// nil entries are skipped. Join() and Join(nil) return nil.
func Join(obs ...Observer) Observer {
	var list multi
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return list
}

type multi []Observer

func (m multi) Observe(ctx context.Context, e Event) {
	for _, o := range m {
		o.Observe(ctx, e)
	}
}
