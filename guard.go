package ratekit

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
)

// A Verdict is what one request gets from a Guard.
type Verdict struct {
	// Pass reports that the request goes on to the handler.
	Pass bool
	// Decision is the Limiter's decision; zero when Err is set.
	Decision Decision
	// Err is the error the error policies handled: a store failure or
	// timeout, a key error, an invalid cost. Report it; never show it.
	Err error
	// Response is the 429, 400 or 503 to send when Pass is false.
	Response *response.Error
	// Reservation holds the request's charge and InFlight slots when the
	// Guard reserves (see Reserving) and the request passes, even failing
	// open (see InFlight); nil otherwise. The caller ends it with Run once
	// the request is handled.
	Reservation *Reservation
}

// A Guard is the transport-neutral pipeline of one Limiter under a set of
// options: given a request's key and cost, it asks the Limiter within the
// timeout, applies the error policies, sets the rate-limit headers and says
// what the request gets. Middleware, the framework adapters, levels and
// plans are built on it, so every path answers alike; use one directly to
// adapt the pipeline to another transport.
//
// Build one with NewGuard; the zero Guard is not usable. A Guard is safe for
// concurrent use.
type Guard struct {
	limiter   *Limiter
	cfg       *config
	reserving bool // see Reserving
}

// NewGuard returns the Guard of l under opts, the options of Middleware. It
// panics if l is nil, or if WithSettle or WithCountIf is given for a store
// that cannot settle l's charges (whose prepared form is no store.Settler):
// programming errors found when the route is built, never at request time.
func NewGuard(l *Limiter, opts ...Option) *Guard {
	if l == nil {
		panic("ratekit: a Guard needs a Limiter; build one with ratekit.New")
	}
	cfg := newConfig(opts)
	if (cfg.settle || cfg.countIf != nil) && l.set.Load().settler == nil {
		panic(errCannotSettle.Error() + " (WithSettle and WithCountIf settle every request's charge)")
	}
	if cfg.observer != nil {
		l.mu.Lock()
		l.observers = append(l.observers, cfg.observer)
		l.mu.Unlock()
	}
	return &Guard{limiter: l, cfg: cfg, reserving: l.set.Load().lease > 0 || cfg.settle || cfg.countIf != nil}
}

// Check decides one request. key and keyErr are the key function's result
// (a non-nil keyErr goes to the key error policy without a store call),
// cost is what the request costs. A request admitted by a LeakyBucket in
// queue mode returns after its Delay (or when ctx ends). Check sets the
// rate-limit headers, and on a denial Retry-After and Cache-Control, on h.
func (g *Guard) Check(ctx context.Context, key string, keyErr error, cost int64, h response.HeaderSetter) Verdict {
	c := g.cfg
	var start time.Time
	if c.observer != nil {
		start = time.Now()
	}
	var d Decision
	var res *Reservation // set when the Guard reserves
	err := keyErr
	if err == nil {
		// bounded unless the store never waits; the timer ends with the call, not a queue delay
		sctx, cancel := ctx, noCancel
		if !g.limiter.unbounded {
			sctx, cancel = g.Bound(ctx)
		}
		if g.reserving {
			// on a store error, res holds the request's place in the gate, if any
			if res, err = g.limiter.set.Load().reserve(sctx, key, cost, true); err == nil {
				d = res.Decision
			}
		} else {
			d, err = g.limiter.AllowN(sctx, key, cost)
		}
		cancel()
	}
	requestErr := keyErr != nil || isRequestError(err)
	if c.observer != nil {
		g.observe(ctx, start, key, requestErr, cost, d, err, res)
	}
	if err != nil {
		switch {
		case requestErr && c.keyPolicy == FailClosed:
			return Verdict{Err: err, Response: response.KeyError(err)}
		case !requestErr && c.policy == FailClosed:
			res.leaveGate()
			return Verdict{Err: err, Response: response.Unavailable(time.Second)}
		}
		return Verdict{Pass: true, Err: err, Reservation: res}
	}
	writeHeaders(h, &d, c.headers, c.now())
	if d.Allowed {
		if d.Delay > 0 { // a LeakyBucket's queue: wait for the turn, unless the request ends first
			select {
			case <-time.After(d.Delay):
			case <-ctx.Done():
			}
		}
		return Verdict{Pass: true, Decision: d, Reservation: res}
	}
	response.SetRetry(h, d.RetryAfter)
	return Verdict{Decision: d, Response: DeniedResponse(d, c.code)}
}

// Render sets the response headers of e (Retry-After, Cache-Control,
// Content-Type) on h and returns its body through the configured renderer.
func (g *Guard) Render(e *response.Error, h response.HeaderSetter) []byte {
	return e.Render(h, g.cfg.render)
}

// Report hands err, a store's, to the configured error handler
// (WithErrorHandler; by default a throttled slog warning), and reports
// whether the error policy lets the request through (FailOpen). r may be nil.
func (g *Guard) Report(r *http.Request, err error) (pass bool) {
	g.cfg.onError(r, err)
	return g.cfg.policy == FailOpen
}

// Skip reports whether WithSkip lets r through uncounted.
func (g *Guard) Skip(r *http.Request) bool { return g.cfg.skip != nil && g.cfg.skip(r) }

// Cost returns what r costs (WithCost, WithCostFunc; 1 by default).
func (g *Guard) Cost(r *http.Request) int64 {
	if g.cfg.cost != nil {
		return g.cfg.cost(r)
	}
	return 1
}

// Bound applies the store timeout of WithTimeout to ctx (keeping ctx's
// values but not its cancellation), or the deadline of Budget when it comes
// first. Check bounds its store calls so; callers bound with it the store
// calls they make themselves (a reputation read, say).
func (g *Guard) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	t := g.cfg.timeout
	d, ok := ctx.Value(budgetKey{}).(time.Time)
	if t > 0 && (!ok || time.Until(d) > t) {
		return context.WithTimeout(context.WithoutCancel(ctx), t)
	}
	if ok {
		return context.WithDeadline(ctx, d)
	}
	return ctx, noCancel
}

// noCancel is the CancelFunc of a context that needs none.
func noCancel() {}

// Budget returns ctx carrying one deadline, the Guard's timeout from now,
// for every store call that any Guard (Check, Bound) makes with it, so that
// a request's store calls share one timeout; a queue delay still ends only
// with ctx. Without a timeout, Budget returns ctx.
func (g *Guard) Budget(ctx context.Context) context.Context {
	if g.cfg.timeout <= 0 {
		return ctx
	}
	return context.WithValue(ctx, budgetKey{}, time.Now().Add(g.cfg.timeout))
}

// budgetKey carries the deadline of Budget.
type budgetKey struct{}

// Refuse writes a verdict that does not pass to a net/http response: the
// denied handler (WithDeniedHandler) for a denial when one is set, else the
// verdict's rendered Response.
func (g *Guard) Refuse(w http.ResponseWriter, r *http.Request, v Verdict) {
	if v.Err == nil && g.cfg.denied != nil {
		g.cfg.denied(w, r, v.Decision)
		return
	}
	v.Response.Write(w, g.cfg.render)
}

// isRequestError reports an error the request caused: an empty key or an
// invalid cost.
func isRequestError(err error) bool {
	return errors.Is(err, ErrEmptyKey) || errors.Is(err, ErrInvalidCost)
}

// observe reports a decision of Check, made from start, to the observer:
// its outcome and binding limit, or the error that stopped it.
func (g *Guard) observe(ctx context.Context, start time.Time, key string, requestErr bool, cost int64, d Decision, err error, res *Reservation) {
	obs, set := g.cfg.observer, g.limiter.set.Load()
	if res != nil {
		set = res.set // the limits that decided, should Update have replaced them since
	}
	e := observe.Event{Cost: cost, Subject: key, Err: err, Policy: set.names}
	switch {
	case requestErr:
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
		obs.Observe(context.WithoutCancel(ctx), observe.Event{Outcome: observe.Released, Policy: set.held,
			Held: set.held, Subject: key})
	}) {
		e.Held = set.held
	}
	obs.Observe(ctx, e)
}

// DeniedResponse returns the 429 body for a denied decision, with code
// response.CodeRateLimited ("Too many requests. …") or
// response.CodeTooManyAttempts ("Too many attempts. …").
func DeniedResponse(d Decision, code response.Code) *response.Error {
	q := d.Limit.def().headerQ
	retry := d.RetryAfter
	if d.Unsatisfiable {
		retry = 0
	}
	e := response.TooMany(code, retry, q, clampSF(d.Remaining), d.Limit.Name())
	e.Context.Blocked = d.Blocked
	e.Context.Violated = []string{d.Limit.Name()} // then the others that denied, in the Limiter's order
	for _, s := range d.States {
		if !s.Allowed && s.Limit.Name() != d.Limit.Name() {
			e.Context.Violated = append(e.Context.Violated, s.Limit.Name())
		}
	}
	return e
}
