package ratekit

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ErrorCode is the machine-readable code of an ErrorResponse; the zero value
// is no code.
type ErrorCode string

// Error codes.
const (
	CodeRateLimited        ErrorCode = "RATE_LIMITED"        // 429, generic limits
	CodeTooManyAttempts    ErrorCode = "TOO_MANY_ATTEMPTS"   // 429, login and verification
	CodeServiceUnavailable ErrorCode = "SERVICE_UNAVAILABLE" // 503, the store failed and the policy is fail closed
	CodeBadRequest         ErrorCode = "BAD_REQUEST"         // 400, the request has no usable key or cost
	CodePayloadTooLarge    ErrorCode = "PAYLOAD_TOO_LARGE"   // 413, the key is in a body larger than the key function reads
)

// ErrorResponse is the body of a denial (429), of a store failure under a
// fail-closed policy (503), or of a request without a usable key (400). It
// implements error, so handlers can return it, and http.Handler, so they can
// serve it; Write sends it through a Renderer. It never carries internal
// error text. Build it with DeniedResponse, UnavailableResponse or
// BadRequestResponse; it is a plain value, safe to share once built.
type ErrorResponse struct {
	Status  int          `json:"status"`
	Code    ErrorCode    `json:"code"`
	Message string       `json:"message"`
	Context ErrorContext `json:"context"`
}

// ErrorContext holds the numbers behind an ErrorResponse, a plain value. Limit, Remaining
// and Policy describe the binding limit; they are omitted when Policy is
// empty (a 503 has no limit to describe). RetryAfter is omitted when 0 (a
// request that can never pass).
type ErrorContext struct {
	RetryAfter int64  `json:"retryAfter,omitempty"` // seconds, as in the Retry-After header
	Limit      int64  `json:"limit,omitempty"`      // the binding limit's quota
	Remaining  int64  `json:"remaining"`            // the binding limit's remaining quota
	Policy     string `json:"policy,omitempty"`     // the binding limit's name
	// Violated names the limits that refused the request (a 429): the
	// binding one and any other that denied too. RenderProblem writes them
	// as violated-policies; RenderJSON leaves them out.
	Violated []string `json:"-"`
	// Blocked reports a 429 of a penalty block (Limit.Block) or a lockout:
	// the client was refused for abnormal usage, not for a quota that
	// refills. RenderProblem writes it as the problem type
	// abnormal-usage-detected; RenderJSON leaves it out.
	Blocked bool `json:"-"`
}

// Error implements error with the response's message.
func (e *ErrorResponse) Error() string { return e.Message }

// retryAfter returns the wait carried by the response.
func (e *ErrorResponse) retryAfter() time.Duration {
	return time.Duration(e.Context.RetryAfter) * time.Second
}

// DeniedResponse returns the 429 body for a denied decision, with code
// CodeRateLimited ("Too many requests. …") or CodeTooManyAttempts ("Too many
// attempts. …").
func DeniedResponse(d Decision, code ErrorCode) *ErrorResponse {
	q, _ := policyQuota(d.Limit)
	retry := d.RetryAfter
	if d.Unsatisfiable {
		retry = 0
	}
	e := tooMany(code, retry, q, d.Remaining, d.Limit.Name())
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

// tooMany builds a 429 body; a retry of 0 means the request can never pass.
func tooMany(code ErrorCode, retry time.Duration, limit, remaining int64, policy string) *ErrorResponse {
	e := &ErrorResponse{
		Status:  http.StatusTooManyRequests,
		Code:    code,
		Context: ErrorContext{Limit: limit, Remaining: clampSF(remaining), Policy: policy},
	}
	what := "Too many requests."
	if code == CodeTooManyAttempts {
		what = "Too many attempts."
	}
	if retry <= 0 {
		e.Message = what + " This request costs more than the limit allows; it can never pass."
		return e
	}
	e.Context.RetryAfter = retryAfterSeconds(retry)
	e.Message = what + " Try again in " + seconds(e.Context.RetryAfter) + "."
	return e
}

// UnavailableResponse returns the 503 body used when the store fails under a
// fail-closed policy.
func UnavailableResponse(retry time.Duration) *ErrorResponse {
	s := retryAfterSeconds(retry)
	return &ErrorResponse{
		Status:  http.StatusServiceUnavailable,
		Code:    CodeServiceUnavailable,
		Message: "Service temporarily unavailable. Try again in " + seconds(s) + ".",
		Context: ErrorContext{RetryAfter: s},
	}
}

// BadRequestResponse returns the 400 body used when a request has no usable
// key or cost under the default key-error policy.
func BadRequestResponse() *ErrorResponse {
	return &ErrorResponse{
		Status:  http.StatusBadRequest,
		Code:    CodeBadRequest,
		Message: "The request lacks what this service counts requests by.",
	}
}

// KeyErrorResponse returns the response to a request whose key function
// (or cost) failed with err under the default key error policy: 413
// PAYLOAD_TOO_LARGE for a body too large (an error matching
// *http.MaxBytesError, as package bodykey's key functions return), else
// BadRequestResponse's 400.
func KeyErrorResponse(err error) *ErrorResponse {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &ErrorResponse{
			Status:  http.StatusRequestEntityTooLarge,
			Code:    CodePayloadTooLarge,
			Message: "The request body is larger than this service reads.",
		}
	}
	return BadRequestResponse()
}

func seconds(n int64) string {
	if n == 1 {
		return "1 second"
	}
	return strconv.FormatInt(n, 10) + " seconds"
}

// A Renderer turns an ErrorResponse into a body and its content type. It is
// called by concurrent requests, so it must be safe for concurrent use;
// RenderJSON and RenderProblem are. A nil Renderer means RenderJSON.
type Renderer func(e *ErrorResponse) (contentType string, body []byte)

// RenderJSON renders {"status":…,"code":…,"message":…,"context":{…}} as
// application/json. It is the default.
func RenderJSON(e *ErrorResponse) (string, []byte) {
	b, err := json.Marshal(jsonBody{Status: e.Status, Code: e.Code, Message: e.Message, Context: jsonContext(e.Context)})
	if err != nil { // unreachable: every field marshals
		b = []byte(fmt.Sprintf(`{"status":%d}`, e.Status))
	}
	return "application/json", b
}

// jsonBody is RenderJSON's body: an ErrorResponse with its context written
// as documented on ErrorContext.
type jsonBody struct {
	Status  int       `json:"status"`
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
	Context any       `json:"context"`
}

// jsonContext returns the context member: retryAfter, limit, remaining and
// policy, or retryAfter alone when no limit is described.
func jsonContext(c ErrorContext) any {
	type withLimit struct {
		RetryAfter int64  `json:"retryAfter,omitempty"`
		Limit      int64  `json:"limit"`
		Remaining  int64  `json:"remaining"`
		Policy     string `json:"policy"`
	}
	type retryOnly struct {
		RetryAfter int64 `json:"retryAfter,omitempty"`
	}
	if c.Policy == "" {
		return retryOnly{c.RetryAfter}
	}
	return withLimit{c.RetryAfter, c.Limit, c.Remaining, c.Policy}
}

// render returns the response's headers and body through render (nil means
// RenderJSON), for writers other than an http.ResponseWriter: it sets
// Retry-After, Cache-Control: no-store, Content-Type and
// X-Content-Type-Options on h and returns the body.
func (e *ErrorResponse) render(h HeaderSetter, render Renderer) []byte {
	if render == nil {
		render = RenderJSON
	}
	contentType, body := render(e)
	writeRetryHeaders(h, e.retryAfter())
	h.Set(headerContentType, contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	return body
}

// Write writes the response to w through render (nil means RenderJSON):
// status, Retry-After, Cache-Control: no-store, content type and body.
func (e *ErrorResponse) Write(w http.ResponseWriter, render Renderer) {
	body := e.render(w.Header(), render)
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// ServeHTTP writes the response as JSON; an *ErrorResponse is an http.Handler.
func (e *ErrorResponse) ServeHTTP(w http.ResponseWriter, _ *http.Request) { e.Write(w, nil) }
