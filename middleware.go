package ratekit

import (
	"context"
	"net/http"
	"time"
)

// Middleware returns net/http middleware that counts each request against l
// under the subject named by key:
//
//   - allowed: the rate-limit headers are set and the request goes on;
//   - denied: 429 Too Many Requests with Retry-After, Cache-Control: no-store,
//     the rate-limit headers and a JSON body (see DeniedResponse);
//   - no decision (the store failed or timed out, the key function failed or
//     gave an empty key, the cost is invalid): the error policy decides,
//     fail open by default; a store error is never a 429.
//
// Middleware panics if l or key is nil: that is a programming error found
// when the handler is built, never at request time.
func Middleware(l *Limiter, key KeyFunc, opts ...Option) func(http.Handler) http.Handler {
	if l == nil || key == nil {
		panic("ratekit: Middleware needs a Limiter and a KeyFunc")
	}
	c := newConfig(opts)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c.skip != nil && c.skip(r) {
				next.ServeHTTP(w, r)
				return
			}
			d, err := c.decide(r, l, key)
			if err != nil {
				c.onError(r, err)
				if c.policy == FailClosed {
					UnavailableResponse(c.closedRetry).Write(w, c.render)
					return
				}
				next.ServeHTTP(w, r)
				return
			}
			h := w.Header()
			WriteHeaders(h, d, c.headers, time.Now())
			if d.Allowed {
				next.ServeHTTP(w, r)
				return
			}
			if c.denied != nil {
				WriteRetryHeaders(h, d.RetryAfter)
				c.denied(w, r, d)
				return
			}
			DeniedResponse(d, c.code).Write(w, c.render)
		})
	}
}

// decide runs the pipeline's key → cost → store steps for one request.
func (c *config) decide(r *http.Request, l *Limiter, key KeyFunc) (Decision, error) {
	k, err := key(r)
	if err != nil {
		return Decision{}, err
	}
	cost := int64(1)
	if c.cost != nil {
		cost = c.cost(r)
	}
	ctx := r.Context()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	return l.AllowN(ctx, k, cost)
}
