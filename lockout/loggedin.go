package lockout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/ratekit/ratekit/internal/status"
)

// attempt is what Middleware knows of the attempt its handler serves,
// in the request's context for LoggedIn.
type attempt struct {
	lo      *Lockout
	key     string   // the subject the attempt was counted against
	d       Decision // the attempt
	keep    bool     // KeepOnSuccess
	carried bool     // the request carried a token valid for key, not revoked
	rec     *status.Recorder

	mu        sync.Mutex
	succeeded bool  // LoggedIn was called
	result    error // what it returned
	finished  bool  // the handler returned: LoggedIn is too late
}

// attemptKey is the context key of an attempt.
type attemptKey struct{}

// finish marks the handler returned and reports whether LoggedIn settled
// the attempt.
func (a *attempt) finish() (succeeded bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.finished = true
	return a.succeeded
}

// LoggedIn reports, from a handler behind a Lockout's Middleware, that the
// attempt succeeded: account's password (or code) checked out. It settles
// the attempt as a success, whatever status the handler then writes (a
// login form's 303 too): a trusted device's attempt is given back, an
// attempt without one resets account's windows (with KeepOnSuccess: is
// given back). With Config.Devices, it then trusts the request's device,
// unless it carried a trusted cookie: it takes a slot (TrustDevice) and sets
// the device cookie on the response. It answers ErrTooManyDevices, with the
// login standing, when the account may trust no more devices.
//
// Call it from the handler's goroutine, before the response's status is
// written: once it is, or once the handler has returned, LoggedIn does
// nothing and returns an error. account must be the subject the Middleware
// counted the attempt against (its key function's value, e.g. lower-cased):
// for another one LoggedIn does nothing and returns an error, so that a
// request whose key names one account and whose handler logs in another
// never gets a device trusted for the first. Only the innermost lockout
// Middleware of a request is told: put the account's innermost. A second
// call returns what the first did.
func LoggedIn(ctx context.Context, account string) error {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	if a == nil {
		return errors.New("ratekit: lockout.LoggedIn: no lockout Middleware counted this request")
	}
	if account != a.key {
		return fmt.Errorf("ratekit: lockout.LoggedIn(%q): lockout %q counted the attempt against another subject; pass its key function's value, and put the account's lockout innermost", account, a.lo.cfg.Name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.succeeded:
		return a.result
	case a.finished || a.rec.Code != 0:
		return fmt.Errorf("ratekit: lockout.LoggedIn(%q): called after the response was written; call it before", account)
	}
	a.succeeded = true
	a.result = a.settle(ctx)
	return a.result
}

// settle settles a's attempt as a success and trusts the device.
func (a *attempt) settle(ctx context.Context) error {
	lo := a.lo
	var err error
	if a.d.Trusted || a.keep {
		err = lo.Refund(ctx, a.d)
	} else {
		err = lo.Reset(ctx, a.key)
	}
	if err != nil || lo.slots == nil || a.d.Trusted || a.carried {
		return err
	}
	token, expires, err := lo.TrustDevice(ctx, a.key)
	if err != nil {
		return err
	}
	http.SetCookie(a.rec, lo.DeviceCookie(a.key, token, expires))
	return nil
}
