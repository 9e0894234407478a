package lockout

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/status"
	"github.com/ratekit/ratekit/internal/throttle"
	"github.com/ratekit/ratekit/response"
)

// An Option configures Lockout.Middleware; Options are safe to share, and a
// nil Option is a programming error.
type Option interface{ apply(*middleware) }

type optionFunc func(*middleware)

func (f optionFunc) apply(m *middleware) { f(m) }

type middleware struct {
	failures []int
	keep     bool
	render   response.Renderer
	onError  func(r *http.Request, err error)
	trusted  func(r *http.Request) bool // SkipTrusted's test; nil: none
}

// FailureStatuses sets the response statuses that count as a failed attempt
// (default 401, 403 and 422).
func FailureStatuses(codes ...int) Option {
	return optionFunc(func(m *middleware) { m.failures = codes })
}

// KeepOnSuccess keeps the counter when an attempt succeeds. Use it for a
// per-IP lockout beside a per-account one: a success for one account must
// not clear what the IP did to others.
func KeepOnSuccess() Option { return optionFunc(func(m *middleware) { m.keep = true }) }

// SkipTrusted lets requests that carry a device cookie of account, a
// Lockout with Config.Devices, signed for the account key names, past this
// lockout uncounted: use it on the per-IP and per-password lockouts in front
// of the account's, so that failures of others behind the same address (a
// NAT, an office proxy) or with the same password never refuse the owner's
// trusted device. The test needs no store call, so a revoked token passes
// too, for its account only: account's own Middleware then counts the
// attempt against the account's windows (a trusted one: against the
// device). A request without a well-formed, unexpired token is decided
// before key reads the body.
func SkipTrusted(account *Lockout, key ratekit.KeyFunc) Option {
	if account == nil || account.slots == nil || key == nil {
		panic("ratekit: SkipTrusted needs a Lockout with Config.Devices and its KeyFunc")
	}
	return optionFunc(func(m *middleware) {
		m.trusted = func(r *http.Request) bool {
			if !account.mayCarryToken(r) {
				return false
			}
			k, err := key(r)
			if err != nil {
				return false
			}
			_, _, ok := account.deviceToken(r, k)
			return ok
		}
	})
}

// WithRenderer selects the body renderer (default response.JSON).
func WithRenderer(r response.Renderer) Option {
	return optionFunc(func(m *middleware) { m.render = r })
}

// WithErrorHandler is called with store and key errors (default: a
// slog warning at most once per second, with a count).
func WithErrorHandler(f func(r *http.Request, err error)) Option {
	return optionFunc(func(m *middleware) { m.onError = f })
}

// Middleware counts failed attempts only. Before the handler it records the
// attempt (Attempt); a refused one gets 429 TOO_MANY_ATTEMPTS with
// Retry-After and the handler does not run. After the handler, a failure
// status (or a panic) keeps the attempt, a 2xx resets the subject (with
// KeepOnSuccess, refunds the attempt), any other status refunds it; a
// handler that called LoggedIn has succeeded, whatever its status. Key
// errors answer 400 (413 for a body too large), store errors 503 unless
// FailOpen. Chain one per subject kind, e.g. per account and per IP; the
// per-IP one should count 400, 413 and 429 too (FailureStatuses). The key
// function must read the account the handler checks (bodykey's read what
// http.Request.FormValue and encoding/json read).
//
// With Config.Devices, the attempt carries the request's device cookie for
// the account (AttemptDevice): a trusted one is counted against its device,
// and its success gives that attempt back and leaves the windows alone; a
// revoked one is deleted. A device is trusted when the handler calls
// LoggedIn.
func (lo *Lockout) Middleware(key ratekit.KeyFunc, opts ...Option) func(http.Handler) http.Handler {
	if key == nil {
		panic("ratekit: Lockout.Middleware needs a KeyFunc")
	}
	m := &middleware{failures: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity}}
	for _, o := range opts {
		o.apply(m)
	}
	if m.onError == nil {
		m.onError = throttle.New().Error
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m.trusted != nil && m.trusted(r) {
				next.ServeHTTP(w, r)
				return
			}
			k, err := key(r)
			if err == nil && k == "" {
				err = ratekit.ErrEmptyKey
			}
			if err != nil {
				m.onError(r, err)
				response.KeyError(err).Write(w, m.render)
				return
			}
			_, slot, verified := lo.deviceToken(r, k) // checked once, here
			d, err := lo.attemptDevice(r.Context(), k, slot, verified)
			if err != nil {
				m.onError(r, err)
			}
			if d.Revoked {
				http.SetCookie(w, lo.DeviceCookie(k, "", time.Time{}))
			}
			if e := lo.Response(d, err); e != nil {
				e.Write(w, m.render)
				return
			}
			rec := &status.Recorder{ResponseWriter: w}
			// carried: a store error leaves d untrusted, and the device gets no second token
			st := &attempt{lo: lo, key: k, d: d, keep: m.keep, rec: rec, carried: verified && !d.Revoked}
			next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), attemptKey{}, st)))
			succeeded := st.finish()
			switch status := rec.Status(); {
			case succeeded:
				err = nil // LoggedIn settled it
			case slices.Contains(m.failures, status):
				err = nil // the attempt failed: it stays counted
			case status/100 == 2 && !m.keep && !d.Trusted:
				err = lo.Reset(r.Context(), k)
			default:
				err = lo.Refund(r.Context(), d)
			}
			if err != nil {
				m.onError(r, err)
			}
		})
	}
}
