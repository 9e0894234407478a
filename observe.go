package ratekit

import (
	"context"
	"time"

	"github.com/ratekit/ratekit/observe"
)

// observe reports a decision of Check, made from start, to the observer:
// its outcome and binding limit, or the error that stopped it.
func (g *Guard) observe(ctx context.Context, start time.Time, key string, keyErr error, cost int64, d Decision, err error, res *Reservation) {
	obs := g.cfg.observer
	e := observe.Event{Cost: cost, Subject: key, Err: err, Policy: g.limiter.names}
	switch {
	case keyErr != nil || isRequestError(err):
		e.Outcome = observe.Invalid
	case err != nil:
		e.Outcome, e.Latency = observe.Error, time.Since(start)
	default:
		e.Latency, e.Fallback, e.Cached = time.Since(start), d.Fallback, d.Cached
		binding, remaining := d.Limit, d.Remaining
		switch {
		case !d.Allowed:
			e.Outcome = observe.Denied
		case d.ShadowDenied:
			e.Outcome = observe.ShadowDenied
			binding, remaining = d.shadow, 0
		}
		e.Policy, e.Remaining = binding.Name(), max(remaining, 0)
		e.Quota = binding.def().headerQ
	}
	if res != nil && res.onRelease(func() {
		obs.Observe(context.WithoutCancel(ctx), observe.Event{Outcome: observe.Released, Policy: g.limiter.held,
			Held: g.limiter.held, Subject: key})
	}) {
		e.Held = g.limiter.held
	}
	obs.Observe(ctx, e)
}
