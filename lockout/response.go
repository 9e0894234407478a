package lockout

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/response"
)

// Enforce is the one-call form for handlers: it records an attempt and
// returns nil when it may proceed, else the *response.Error of Response to
// send (with its Write or ServeHTTP method).
func (lo *Lockout) Enforce(ctx context.Context, key string) error {
	if e := lo.Response(lo.Attempt(ctx, key)); e != nil {
		return e
	}
	return nil
}

// Response maps the result of Attempt (or Check) to the response to send, or
// nil to go on: 429 TOO_MANY_ATTEMPTS when denied, with Retry-After, the
// window's Attempts as limit and its Scope as policy; 503 when the store
// failed (nil when FailOpen); 400 for an empty key.
func (lo *Lockout) Response(d Decision, err error) *response.Error {
	switch {
	case errors.Is(err, ratekit.ErrEmptyKey):
		return response.BadRequest()
	case err != nil && lo.cfg.FailOpen:
		return nil
	case err != nil:
		return response.Unavailable(time.Second)
	case !d.Allowed:
		i := slices.IndexFunc(lo.limits, func(l ratekit.Limit) bool { return l.Name() == d.Scope })
		limit := lo.limits[max(i, 0)] // the first window for a Decision that names none
		return ratekit.DeniedResponse(ratekit.Decision{Limit: limit, RetryAfter: d.RetryAfter, Blocked: true}, response.CodeTooManyAttempts)
	}
	return nil
}
