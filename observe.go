package ratekit

import (
	"context"
	"time"

	"github.com/ratekit/ratekit/observe"
)

// observe reports a decision of Check, made from start, to the observer.
func (g *Guard) observe(ctx context.Context, start time.Time, key string, keyErr error, cost int64, d Decision, err error, res *Reservation) {
	obs := g.cfg.observer
	e := observe.Event{Cost: cost, Subject: key, Err: err}
	invalid := keyErr != nil || isRequestError(err)
	if !invalid {
		e.Latency = time.Since(start)
	}
	fillEvent(&e, d, err, invalid, g.limiter.names)
	if res != nil && res.onRelease(func() {
		obs.Observe(context.WithoutCancel(ctx), observe.Event{Outcome: observe.Released, Policy: g.limiter.held,
			Held: g.limiter.held, Subject: key})
	}) {
		e.Held = g.limiter.held
	}
	obs.Observe(ctx, e)
}

// fillEvent sets e's outcome and binding limit from a decision, or from the
// error that stopped it (invalid: the request's key or cost); names lists the
// call's policies.
func fillEvent(e *observe.Event, d Decision, err error, invalid bool, names string) {
	switch {
	case invalid:
		e.Outcome, e.Policy = observe.Invalid, names
		return
	case err != nil:
		e.Outcome, e.Policy = observe.Error, names
		return
	}
	e.Fallback, e.Cached = d.Fallback, d.Cached
	binding, remaining := d.Limit, d.Remaining
	switch {
	case !d.Allowed:
		e.Outcome = observe.Denied
	case d.ShadowDenied:
		e.Outcome = observe.ShadowDenied
		binding, remaining = d.shadow, 0
	}
	e.Policy, e.Remaining = binding.Name(), max(remaining, 0)
	e.Quota, _ = policyQuota(binding)
}
