package ratekit

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ratekit/ratekit/internal/core"
)

// verdict is what one request gets from a guard.
type verdict = core.Verdict[Decision, ErrorResponse]

// A guard is the transport-neutral core of Middleware: given a request's key
// and cost, it asks the Limiter, sets the rate-limit headers and says what the
// request gets. Middleware, the framework adapters (through package adapter),
// lockouts and levels are built on it, so that every path answers with the
// same statuses, headers and bodies. It is safe for concurrent use.
type guard struct {
	limiter *Limiter
	cfg     *config
	// unbounded is set when the Limiter's store never blocks (see
	// nonBlocking): its calls need no timeout context.
	unbounded bool
}

// nonBlocking is store.NonBlocking's method: a Store whose calls never wait
// on I/O, timers or other processes reports true, and the guard calls it
// without a timeout context, which would cost more than the call.
type nonBlocking interface {
	NonBlocking() bool
}

// newGuard builds the guard of l with opts.
func newGuard(l *Limiter, opts []Option) *guard {
	nb, ok := l.store.(nonBlocking)
	return &guard{limiter: l, cfg: newConfig(opts), unbounded: ok && nb.NonBlocking()}
}

func init() {
	core.Register(func(l *Limiter, opts []Option) core.Guard[Decision, ErrorResponse] {
		if l == nil {
			panic("ratekit: a middleware needs a Limiter; build one with ratekit.New")
		}
		return newGuard(l, opts)
	})
}

// Check decides one request. key and keyErr are the key function's result,
// cost is what the request costs. A request admitted by a LeakyBucket in
// queue mode returns after its Delay (or when ctx ends). Check sets the
// rate-limit headers, and on a denial Retry-After and Cache-Control, on h.
func (g *guard) Check(ctx context.Context, key string, keyErr error, cost int64, h core.Header) verdict {
	d, err := g.observed(ctx, key, keyErr, cost)
	c := g.cfg
	if err != nil {
		requestErr := keyErr != nil || isRequestError(err)
		switch {
		case requestErr && c.keyPolicy == FailClosed:
			return verdict{Err: err, Response: BadRequestResponse()}
		case !requestErr && c.policy == FailClosed:
			return verdict{Err: err, Response: UnavailableResponse(c.closedRetry)}
		}
		return verdict{Pass: true, Err: err}
	}
	writeHeaders(h, &d, c.headers, c.clock())
	if d.Allowed {
		wait(ctx, d.Delay)
		return verdict{Pass: true, Decision: d}
	}
	writeRetryHeaders(h, d.RetryAfter)
	return verdict{Decision: d, Response: DeniedResponse(d, c.code)}
}

// Render sets the response headers of e (Retry-After, Cache-Control,
// Content-Type) on h and returns its body through the configured renderer.
func (g *guard) Render(e *ErrorResponse, h core.Header) []byte { return e.render(h, g.cfg.render) }

// Report hands err to the configured error handler (WithErrorHandler; by
// default a throttled slog warning). r may be nil.
func (g *guard) Report(r *http.Request, err error) { g.cfg.onError(r, err) }

// Skip reports whether WithSkip lets r through uncounted.
func (g *guard) Skip(r *http.Request) bool { return g.cfg.skip != nil && g.cfg.skip(r) }

// Cost returns what r costs (WithCost, WithCostFunc; 1 by default).
func (g *guard) Cost(r *http.Request) int64 {
	if g.cfg.cost != nil {
		return g.cfg.cost(r)
	}
	return 1
}

// Bound applies the store timeout of WithTimeout to ctx.
func (g *guard) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return g.cfg.bound(ctx)
}

// Timeout is the store timeout of WithTimeout.
func (g *guard) Timeout() time.Duration { return g.cfg.timeout }

// FailOpen reports whether store errors let requests through.
func (g *guard) FailOpen() bool { return g.cfg.policy == FailOpen }

// Refuse writes a verdict that does not pass to a net/http response: the
// denied handler (WithDeniedHandler) for a denial when one is set, else the
// verdict's rendered Response.
func (g *guard) Refuse(w http.ResponseWriter, r *http.Request, v verdict) {
	if v.Err == nil && g.cfg.denied != nil {
		g.cfg.denied(w, r, v.Decision)
		return
	}
	body := g.Render(v.Response, w.Header())
	w.WriteHeader(v.Response.Status)
	_, _ = w.Write(body)
}

// isRequestError reports an error the request caused: an empty key or an
// invalid cost.
func isRequestError(err error) bool {
	return errors.Is(err, ErrEmptyKey) || errors.Is(err, ErrInvalidCost)
}

// wait sleeps d, the delay a LeakyBucket in queue mode gave the request,
// unless the request's context ends first (the handler then sees it).
func wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (g *guard) decide(ctx context.Context, key string, keyErr error, cost int64) (Decision, error) {
	if keyErr != nil {
		return Decision{}, keyErr
	}
	if g.unbounded { // the call returns without waiting: no timer to set
		return g.limiter.AllowN(ctx, key, cost)
	}
	ctx, cancel := g.cfg.bound(ctx)
	defer cancel()
	return g.limiter.AllowN(ctx, key, cost)
}
