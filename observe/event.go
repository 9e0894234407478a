package observe

import (
	"context"
	"slices"
	"time"
)

// Outcome is what a decision came to. The zero value is Allowed.
type Outcome uint8

// Outcomes.
const (
	Allowed      Outcome = iota // the request passed its limits
	Denied                      // a limit refused the request (a 429)
	ShadowDenied                // a shadow limit (ratekit.Limit.Shadow) would have refused; the request passed
	Error                       // the store failed or timed out; the error policy decided (by default: pass)
	Invalid                     // the request had no usable key or cost; it reached no store
	Released                    // no decision: an admitted request gave back (or lapsed) its InFlight slots
	Overridden                  // no decision: an override (ratekit.Limiter.Override) was set or cleared
)

// String returns the outcome's label: "allowed", "denied", "shadow_denied",
// "error", "invalid", "released" or "overridden" ("unknown" for any other
// value).
func (o Outcome) String() string {
	names := [...]string{"allowed", "denied", "shadow_denied", "error", "invalid", "released", "overridden"} // by Outcome
	if int(o) < len(names) {
		return names[o]
	}
	return "unknown"
}

// An Event describes one decision. It is a plain value; an Observer may
// keep it. The zero Event is an allowed decision about no policy.
type Event struct {
	// Outcome is what the decision came to.
	Outcome Outcome
	// Policy names the binding limit: the one that denied, or when allowed
	// the one with the fewest requests left; for a lockout, its name; for
	// Error and Invalid, the call's limits, comma-separated. Names come from
	// configuration, so they are safe as metric labels.
	Policy string
	// Quota and Remaining are the binding limit's quota and what it has left
	// after this call; both 0 when no store decided. For Overridden, Quota
	// is the quota in force from now on (the limit's own once cleared).
	Quota, Remaining int64
	// Cost is what the request was charged (or would have been).
	Cost int64
	// Latency is the time the store took to answer; 0 when none was asked.
	Latency time.Duration
	// Fallback reports a decision made by a fallback store while the
	// primary store was unavailable (store/fallback).
	Fallback bool
	// Cached reports a denial answered in-process without asking the store:
	// by a local deny cache (store/denycache), or because this instance holds
	// every InFlight slot the subject may take; Latency is the local answer's.
	Cached bool
	// Held names, comma-separated, the InFlight limits whose slots the
	// request took, on the event that admitted it (Allowed or ShadowDenied),
	// or gave back, on a Released one; "" when none.
	Held string
	// Subject is the key the decision was about (an IP, an account): personal
	// data, never a metric label, logged only where that is allowed.
	Subject string
	// Err is the error behind an Error or Invalid outcome. It may hold
	// internal detail: log it, never show it to clients.
	Err error
}

// FallbackActive reports what e does to a fallback-active gauge, the rule the
// metrics modules share: a decision a store made (Allowed, Denied,
// ShadowDenied) sets it to 1 when a fallback store made it, else to 0; any
// other outcome leaves it as it was (set is false).
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
// named in e.Held, the rule the metrics modules share: 0 when Held is empty,
// -1 on a Released event, +1 on any other (the admission that took them).
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
// (ratekit.WithObserver, lockout.Config.Observer). Observe is called with
// the request's context on its goroutine, before the response is written:
// it must be safe for concurrent use and quick (count, or hand off).
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
	list := multi(slices.DeleteFunc(slices.Clone(obs), func(o Observer) bool { return o == nil }))
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
