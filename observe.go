package ratekit

import (
	"context"
	"time"

	"github.com/ratekit/ratekit/observe"
)

// observed decides one request as decide does and, when an observer is set,
// reports the decision with the store's latency.
func (g *Guard) observed(ctx context.Context, key string, keyErr error, cost int64, reserved **Reservation) (Decision, error) {
	obs := g.cfg.observer
	if obs == nil {
		return g.decide(ctx, key, keyErr, cost, reserved)
	}
	start := time.Now()
	d, err := g.decide(ctx, key, keyErr, cost, reserved)
	res := *reserved
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
	return d, err
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
