// Package core lets the kit's other packages (the adapter plumbing, lockouts
// and levels) run the request pipeline of package ratekit without ratekit
// exporting it: ratekit registers its guard constructor when it is
// initialised, and every importer of this package imports ratekit too.
package core

import (
	"context"
	"net/http"
	"time"
)

// Header receives response headers: http.Header, or a framework's context.
type Header = interface {
	Set(key, value string)
}

// A Verdict is what one request gets from a Guard; D is ratekit.Decision and
// E ratekit.ErrorResponse.
type Verdict[D, E any] struct {
	// Pass reports that the request goes on to the handler.
	Pass bool
	// Decision is the limiter's decision; zero when Err is set.
	Decision D
	// Err is the error the error policy handled. Report it; never show it.
	Err error
	// Response is the 429, 400 or 503 to send when Pass is false.
	Response *E
}

// A Guard is ratekit's pipeline for one Limiter and its options.
type Guard[D, E any] interface {
	// Check decides one request and sets the rate-limit headers on h.
	Check(ctx context.Context, key string, keyErr error, cost int64, h Header) Verdict[D, E]
	// Render sets a response's headers on h and returns its body.
	Render(e *E, h Header) []byte
	// Report hands an error to the configured error handler; r may be nil.
	Report(r *http.Request, err error)
	// Refuse writes a Verdict that does not pass to a net/http response.
	Refuse(w http.ResponseWriter, r *http.Request, v Verdict[D, E])
	// Skip and Cost apply the net/http options WithSkip and WithCostFunc.
	Skip(r *http.Request) bool
	Cost(r *http.Request) int64
	// Bound applies the store timeout to ctx.
	Bound(ctx context.Context) (context.Context, context.CancelFunc)
	// Timeout is the store timeout (WithTimeout); 0 or less: none.
	Timeout() time.Duration
	// FailOpen reports whether store errors let requests through.
	FailOpen() bool
}

var newGuard any

// Register records ratekit's guard constructor. Only ratekit calls it.
func Register[L, O, D, E any](f func(l *L, opts []O) Guard[D, E]) { newGuard = f }

// NewGuard builds ratekit's guard for l and opts.
func NewGuard[L, O, D, E any](l *L, opts []O) Guard[D, E] {
	return newGuard.(func(*L, []O) Guard[D, E])(l, opts)
}

// budgetKey carries a deadline for the store calls of one request.
type budgetKey struct{}

// WithBudget returns ctx carrying deadline d for every store call a guard
// makes with it: a request that makes several calls (levels) is bounded by
// one timeout in all, while waits that are not store calls (a queue delay)
// still end only with ctx.
func WithBudget(ctx context.Context, d time.Time) context.Context {
	return context.WithValue(ctx, budgetKey{}, d)
}

// Budget returns the deadline WithBudget set, if any.
func Budget(ctx context.Context) (time.Time, bool) {
	d, ok := ctx.Value(budgetKey{}).(time.Time)
	return d, ok
}
