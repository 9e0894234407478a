package ratekit

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// A Guard is the transport-neutral core of Middleware: given a request's key
// and cost, it asks the Limiter, sets the rate-limit headers and says what the
// request gets. Framework adapters are built on it so that every framework
// answers with the same status, headers and body as net/http. It is safe for
// concurrent use.
type Guard struct {
	limiter *Limiter
	cfg     *config
}

// A Verdict is what one request gets from a Guard.
type Verdict struct {
	// Pass reports that the request goes on to the handler.
	Pass bool
	// Decision is the limiter's decision; zero when Err is set.
	Decision Decision
	// Err is the error the error policy handled (store failure or timeout,
	// key error, invalid cost). Report it; never show it to the client.
	Err error
	// Response is the 429, 400 or 503 to send when Pass is false.
	Response *ErrorResponse
}

// NewGuard returns a Guard for l. Options that take an *http.Request (skip,
// cost, denied and error handlers) are applied by Middleware, not by Check;
// adapters offer their own.
func NewGuard(l *Limiter, opts ...Option) *Guard {
	if l == nil {
		panic("ratekit: NewGuard needs a Limiter")
	}
	return &Guard{limiter: l, cfg: newConfig(opts)}
}

// Check decides one request. key and keyErr are the key function's result,
// cost is what the request costs. A request admitted by a LeakyBucket in
// queue mode returns after its Delay (or when ctx ends). Check sets the rate-limit headers, and on a
// denial Retry-After and Cache-Control, on h; the caller writes
// Verdict.Response with Render when Pass is false.
func (g *Guard) Check(ctx context.Context, key string, keyErr error, cost int64, h HeaderSetter) Verdict {
	d, err := g.decide(ctx, key, keyErr, cost)
	c := g.cfg
	if err != nil {
		requestErr := keyErr != nil || isRequestError(err)
		switch {
		case requestErr && c.keyPolicy == FailClosed:
			return Verdict{Err: err, Response: BadRequestResponse()}
		case !requestErr && c.policy == FailClosed:
			return Verdict{Err: err, Response: UnavailableResponse(c.closedRetry)}
		}
		return Verdict{Pass: true, Err: err}
	}
	WriteHeaders(h, d, c.headers, c.now())
	if d.Allowed {
		wait(ctx, d.Delay)
		return Verdict{Pass: true, Decision: d}
	}
	WriteRetryHeaders(h, d.RetryAfter)
	return Verdict{Decision: d, Response: DeniedResponse(d, c.code)}
}

// Render sets the response headers of e (Retry-After, Cache-Control,
// Content-Type) on h and returns its body through the Guard's renderer.
func (g *Guard) Render(e *ErrorResponse, h HeaderSetter) []byte {
	return e.Render(h, g.cfg.render)
}

// ReportError hands err to the configured error handler (WithErrorHandler;
// by default a throttled slog warning). r may be nil.
func (g *Guard) ReportError(r *http.Request, err error) {
	g.cfg.onError(r, err)
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

func (g *Guard) decide(ctx context.Context, key string, keyErr error, cost int64) (Decision, error) {
	if keyErr != nil {
		return Decision{}, keyErr
	}
	ctx, cancel := g.cfg.bound(ctx)
	defer cancel()
	return g.limiter.AllowN(ctx, key, cost)
}

// refuse writes a Verdict that does not pass to a net/http response: the
// denied handler (WithDeniedHandler) for a denial when one is set, else the
// Verdict's rendered Response.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, v Verdict) {
	if v.Err == nil && g.cfg.denied != nil {
		g.cfg.denied(w, r, v.Decision)
		return
	}
	body := g.Render(v.Response, w.Header())
	w.WriteHeader(v.Response.Status)
	_, _ = w.Write(body)
}
