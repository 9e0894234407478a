// Package response holds the bodies ratekit answers with when a request does
// not pass: a denial (429), a store failure under a fail-closed policy (503),
// a request without a usable key (400, or 413 for a body too large). An
// Error is rendered by a Renderer: JSON (the default) or Problem (RFC 9457
// problem+json); ratekit.WithRenderer chooses. Every response carries
// Cache-Control: no-store, and a Retry-After when the client should wait.
package response

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// A Code is the machine-readable code of an Error.
type Code string

// Error codes.
const (
	CodeRateLimited        Code = "RATE_LIMITED"        // 429, generic limits
	CodeTooManyAttempts    Code = "TOO_MANY_ATTEMPTS"   // 429, login and verification
	CodeServiceUnavailable Code = "SERVICE_UNAVAILABLE" // 503, the store failed and the policy is fail closed
	CodeBadRequest         Code = "BAD_REQUEST"         // 400, the request has no usable key or cost
	CodePayloadTooLarge    Code = "PAYLOAD_TOO_LARGE"   // 413, the key is in a body larger than the key function reads
)

// Error is the body of a response the package documentation lists, never
// with internal error text; it implements error and http.Handler. Build it
// with ratekit.DeniedResponse, TooMany, Unavailable, BadRequest or KeyError;
// it is a plain value, safe to share once built.
type Error struct {
	Status  int     `json:"status"`
	Code    Code    `json:"code"`
	Message string  `json:"message"`
	Context Details `json:"context"`
}

// Details holds the numbers behind an Error, a plain value. JSON writes
// Limit, Remaining and Policy only when Policy is set (a 503 has no limit to
// describe), RetryAfter only when not 0, and leaves out the rest.
type Details struct {
	RetryAfter int64  `json:"retryAfter,omitempty"` // seconds, as in the Retry-After header
	Limit      int64  `json:"limit,omitempty"`      // the binding limit's quota
	Remaining  int64  `json:"remaining"`            // the binding limit's remaining quota
	Policy     string `json:"policy,omitempty"`     // the binding limit's name
	// Violated names the limits that refused a 429: the binding one and any
	// other that denied too. Problem writes them as violated-policies.
	Violated []string `json:"-"`
	// Blocked reports a 429 of a penalty block (Limit.Block) or a lockout,
	// not of a quota that refills; Problem gives it its own problem type.
	Blocked bool `json:"-"`
}

// Error implements error with the response's message.
func (e *Error) Error() string { return e.Message }

// TooMany returns a 429 body with code (CodeRateLimited or
// CodeTooManyAttempts) for a client that may retry after retry (0: never),
// describing the limit policy of quota limit with remaining left.
// ratekit.DeniedResponse builds it from a Decision.
func TooMany(code Code, retry time.Duration, limit, remaining int64, policy string) *Error {
	e := &Error{
		Status:  http.StatusTooManyRequests,
		Code:    code,
		Context: Details{Limit: limit, Remaining: remaining, Policy: policy},
	}
	what := "Too many requests."
	if code == CodeTooManyAttempts {
		what = "Too many attempts."
	}
	if retry <= 0 {
		e.Message = what + " This request costs more than the limit allows; it can never pass."
		return e
	}
	e.Context.RetryAfter = retrySeconds(retry)
	e.Message = what + " Try again in " + seconds(e.Context.RetryAfter) + "."
	return e
}

// Unavailable returns the 503 body of a store failure under a fail-closed policy.
func Unavailable(retry time.Duration) *Error {
	s := retrySeconds(retry)
	return &Error{
		Status:  http.StatusServiceUnavailable,
		Code:    CodeServiceUnavailable,
		Message: "Service temporarily unavailable. Try again in " + seconds(s) + ".",
		Context: Details{RetryAfter: s},
	}
}

// BadRequest returns the 400 body of a request without a usable key or cost.
func BadRequest() *Error {
	return &Error{
		Status:  http.StatusBadRequest,
		Code:    CodeBadRequest,
		Message: "The request lacks what this service counts requests by.",
	}
}

// KeyError returns the response to a request whose key function (or cost)
// failed with err under the default key error policy: 413 when err matches
// *http.MaxBytesError (as bodykey's errors do), else BadRequest's 400.
func KeyError(err error) *Error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &Error{
			Status:  http.StatusRequestEntityTooLarge,
			Code:    CodePayloadTooLarge,
			Message: "The request body is larger than this service reads.",
		}
	}
	return BadRequest()
}

func seconds(n int64) string {
	if n == 1 {
		return "1 second"
	}
	return strconv.FormatInt(n, 10) + " seconds"
}

// A Renderer turns an Error into a body and its content type. It must be
// safe for concurrent use, as JSON and Problem are. A nil Renderer means JSON.
type Renderer func(e *Error) (contentType string, body []byte)

// JSON renders {"status":…,"code":…,"message":…,"context":{…}} as
// application/json, the context as documented on Details. It is the default.
func JSON(e *Error) (string, []byte) {
	type context struct {
		RetryAfter int64  `json:"retryAfter,omitempty"`
		Limit      *int64 `json:"limit,omitempty"` // a pointer: written, even as 0, when Policy is set
		Remaining  *int64 `json:"remaining,omitempty"`
		Policy     string `json:"policy,omitempty"`
	}
	c := context{RetryAfter: e.Context.RetryAfter}
	if e.Context.Policy != "" {
		c.Limit, c.Remaining, c.Policy = &e.Context.Limit, &e.Context.Remaining, e.Context.Policy
	}
	b, _ := json.Marshal(struct {
		*Error
		Context context `json:"context"` // hides Error.Context
	}{e, c})
	return "application/json", b
}

// Render sets the response's headers on h (SetRetry's, Content-Type and
// X-Content-Type-Options) and returns its body through render (nil means
// JSON), for writers other than an http.ResponseWriter.
func (e *Error) Render(h HeaderSetter, render Renderer) []byte {
	if render == nil {
		render = JSON
	}
	contentType, body := render(e)
	SetRetry(h, time.Duration(e.Context.RetryAfter)*time.Second)
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	return body
}

// Write writes the status, the headers Render sets and the body to w,
// through render (nil means JSON).
func (e *Error) Write(w http.ResponseWriter, render Renderer) {
	body := e.Render(w.Header(), render)
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// ServeHTTP writes the response as JSON; an *Error is an http.Handler.
func (e *Error) ServeHTTP(w http.ResponseWriter, _ *http.Request) { e.Write(w, nil) }

// HeaderSetter receives response headers: http.Header, or a framework's
// context with a Set(key, value string) method.
type HeaderSetter interface {
	Set(key, value string)
}

// SetRetry sets Cache-Control: no-store and, when retry is positive,
// Retry-After (whole seconds, rounded up) on h, as every 429 and 503 carries.
func SetRetry(h HeaderSetter, retry time.Duration) {
	if retry > 0 {
		h.Set("Retry-After", strconv.FormatInt(retrySeconds(retry), 10))
	}
	h.Set("Cache-Control", "no-store")
}

// retrySeconds is the Retry-After value of retry: whole seconds, rounded up,
// at least 1.
func retrySeconds(retry time.Duration) int64 {
	return max(int64((retry+time.Second-1)/time.Second), 1)
}
