package ratekit

import "github.com/ratekit/ratekit/response"

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
