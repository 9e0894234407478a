package adapter

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/core"
	"github.com/ratekit/ratekit/internal/keyjoin"
)

// HeaderSetter receives response headers. http.Header implements it; so does
// a framework context with a Set(key, value string) method.
type HeaderSetter interface {
	Set(key, value string)
}

// A Verdict is what one request gets from a Guard.
type Verdict struct {
	// Pass reports that the request goes on to the next handler.
	Pass bool
	// Decision is the Limiter's decision; zero when Err is set.
	Decision ratekit.Decision
	// Err is the error the error policies handled (store failure or
	// timeout, key error, invalid cost). Report it; never show it.
	Err error
	// Response is the 429, 400 or 503 to send when Pass is false.
	Response *ratekit.ErrorResponse
}

// A Guard decides requests for one Limiter under the core options, as
// ratekit.Middleware does. It is safe for concurrent use; build it with
// NewGuard (the zero value is not usable).
type Guard struct {
	g core.Guard[ratekit.Decision, ratekit.ErrorResponse]
}

// NewGuard returns a Guard for l under cfg's core options. It panics if l is
// nil: that is a programming error found when the route is built.
func NewGuard[C any](l *ratekit.Limiter, cfg *Config[C]) *Guard {
	return &Guard{g: core.NewGuard[ratekit.Limiter, ratekit.Option, ratekit.Decision, ratekit.ErrorResponse](l, cfg.coreOpts)}
}

// Check decides one request: key and keyErr are the key function's result,
// cost what the request costs. It bounds the store call by the timeout,
// applies the error policies, sets the rate-limit headers on h, and on a
// denial Retry-After and Cache-Control. A request admitted by a LeakyBucket
// in queue mode returns after its delay (or when ctx ends).
func (g *Guard) Check(ctx context.Context, key string, keyErr error, cost int64, h HeaderSetter) Verdict {
	v := g.g.Check(ctx, key, keyErr, cost, h)
	return Verdict{Pass: v.Pass, Decision: v.Decision, Err: v.Err, Response: v.Response}
}

// Render sets the headers of e (Retry-After, Cache-Control, Content-Type,
// X-Content-Type-Options) on h and returns its body through the configured
// renderer. Write the status e.Status and the body.
func (g *Guard) Render(e *ratekit.ErrorResponse, h HeaderSetter) []byte { return g.g.Render(e, h) }

// Report hands err to the core error handler (by default a slog warning at
// most once per second). r may be nil.
func (g *Guard) Report(r *http.Request, err error) { g.g.Report(r, err) }

// JoinKey joins key parts as ratekit.Join does (each written as its length,
// ':' and the part, so no choice of parts collides with another), for
// adapters whose key functions are not net/http ones. An empty part, or no
// part, is ratekit.ErrEmptyKey.
func JoinKey(parts ...string) (string, error) {
	k, err := keyjoin.Join(parts...)
	if err != nil {
		return "", ratekit.ErrEmptyKey
	}
	return k, nil
}

// Join joins key functions of a framework's context C as ratekit.Join does:
// an error or an empty part fails the whole key. Adapters offer it as their
// Join.
func Join[C any, K ~func(C) (string, error)](keys ...K) K {
	return func(c C) (string, error) {
		parts := make([]string, len(keys))
		for i, k := range keys {
			part, err := k(c)
			if err != nil {
				return "", err
			}
			parts[i] = part
		}
		return JoinKey(parts...)
	}
}

// FrameworkIP keys requests by the client address a framework resolved,
// ip(c), grouped as ratekit.ByIP groups addresses (IPv6 by /64); framework
// names it in errors. Adapters offer it as their ByFrameworkIP.
func FrameworkIP[C any, K ~func(C) (string, error)](framework string, ip func(c C) string) K {
	grouping, err := ratekit.NewClientIP()
	if err != nil { // unreachable: no options
		panic(err)
	}
	return func(c C) (string, error) {
		s := ip(c)
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "", fmt.Errorf("ratekit: %s client IP %q does not parse: %w", framework, s, err)
		}
		return grouping.Key(a.Unmap().WithZone("")), nil
	}
}
