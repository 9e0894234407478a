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
	e.Context.Violated = violated(d)
	e.Context.Blocked = d.Blocked
	return e
}

// violated lists the names of the limits that refused d: the binding limit
// first, then the others that denied, in the Limiter's order.
func violated(d Decision) []string {
	names := []string{d.Limit.Name()}
	for _, s := range d.States {
		if !s.Allowed && s.Limit.Name() != d.Limit.Name() {
			names = append(names, s.Limit.Name())
		}
	}
	return names
}
