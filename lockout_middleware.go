package ratekit

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// A LockoutOption configures Lockout.Middleware.
type LockoutOption func(*lockoutMiddleware)

type lockoutMiddleware struct {
	failures []int
	keep     bool
	render   Renderer
	onError  func(r *http.Request, err error)
}

// FailureStatuses sets the response statuses that count as a failed attempt
// (default 401, 403 and 422).
func FailureStatuses(codes ...int) LockoutOption {
	return func(m *lockoutMiddleware) { m.failures = codes }
}

// KeepOnSuccess keeps the counter when an attempt succeeds. Use it for a
// per-IP lockout beside a per-account one: a success for one account must
// not clear what the IP did to others.
func KeepOnSuccess() LockoutOption {
	return func(m *lockoutMiddleware) { m.keep = true }
}

// LockoutRenderer selects the body renderer (default RenderJSON).
func LockoutRenderer(r Renderer) LockoutOption {
	return func(m *lockoutMiddleware) { m.render = r }
}

// LockoutErrorHandler is called with store and key errors (default: a
// throttled slog warning).
func LockoutErrorHandler(f func(r *http.Request, err error)) LockoutOption {
	return func(m *lockoutMiddleware) { m.onError = f }
}

// Middleware counts failed attempts only. Before the handler it records the
// attempt atomically (Attempt): a blocked subject, or one whose attempt
// takes a window past its allowance, gets 429 TOO_MANY_ATTEMPTS with
// Retry-After and the handler does not run, so parallel requests cannot
// slip past the allowance. After the handler, a failure status keeps the
// attempt; a 2xx status resets the counter (or, with KeepOnSuccess, refunds
// the attempt); any other status refunds it. Key errors answer 400; store
// errors answer 503 unless the Lockout is FailOpen. Chain one per subject
// kind, e.g. per account and per IP.
func (lo *Lockout) Middleware(key KeyFunc, opts ...LockoutOption) func(http.Handler) http.Handler {
	if key == nil {
		panic("ratekit: Lockout.Middleware needs a KeyFunc")
	}
	m := &lockoutMiddleware{failures: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity}}
	for _, o := range opts {
		o(m)
	}
	if m.onError == nil {
		m.onError = newThrottledLog(slog.Default()).log
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k, err := key(r)
			if err == nil && k == "" {
				err = ErrEmptyKey
			}
			if err != nil {
				m.onError(r, err)
				BadRequestResponse().Write(w, m.render)
				return
			}
			d, err := lo.Attempt(r.Context(), k)
			if err != nil {
				m.onError(r, err)
			}
			if e := lo.Response(d, err); e != nil {
				e.Write(w, m.render)
				return
			}
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			switch status := rec.status(); {
			case slices.Contains(m.failures, status):
				err = nil // the attempt failed: it stays counted
			case status/100 == 2 && !m.keep:
				err = lo.Reset(r.Context(), k)
			default:
				err = lo.Refund(r.Context(), k, d.Attempt)
			}
			if err != nil {
				m.onError(r, err)
			}
		})
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}

// ByFormValue keys requests by a form field (body or query), trimmed and
// lower-cased so that "Alice " and "alice" share one counter: the account of
// a login form. A missing field is ErrEmptyKey.
func ByFormValue(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := strings.ToLower(strings.TrimSpace(r.FormValue(name)))
		if v == "" {
			return "", ErrEmptyKey
		}
		return v, nil
	}
}

// Enforce is AllowN's one-call form for handlers: nil when the request may
// pass, else an *ErrorResponse to write: 429 RATE_LIMITED with Retry-After,
// 400 for an empty key or a bad cost, 503 when the store fails (to fail open
// instead, let a SERVICE_UNAVAILABLE response pass).
func (l *Limiter) Enforce(ctx context.Context, key string, cost int64) error {
	d, err := l.AllowN(ctx, key, cost)
	switch {
	case err == nil && d.Allowed:
		return nil
	case err == nil:
		return DeniedResponse(d, CodeRateLimited)
	case isRequestError(err):
		return BadRequestResponse()
	default:
		return UnavailableResponse(time.Second)
	}
}
