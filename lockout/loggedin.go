package lockout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// attempt is what Middleware knows of the attempt its handler serves,
// in the request's context for LoggedIn.
type attempt struct {
	lo   *Lockout
	key  string   // the subject the attempt was counted against
	d    Decision // the attempt
	keep bool     // KeepOnSuccess
	w    http.ResponseWriter

	mu        sync.Mutex
	succeeded bool
}

// attemptKey is the context key of an attempt.
type attemptKey struct{}

// done reports whether LoggedIn settled the attempt.
func (a *attempt) done() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.succeeded
}

// LoggedIn reports, from a handler behind a Lockout's Middleware, that the
// attempt succeeded: account's password (or code) checked out. It settles
// the attempt as a success, whatever status the handler then writes (a
// login form's 303 too): a trusted device's attempt is given back, an
// attempt without one resets account's windows (with KeepOnSuccess: is
// given back). With Config.Devices, it then trusts the request's device:
// it takes a slot (TrustDevice) and sets the device cookie on the
// response, so call it before writing the response; it answers
// ErrTooManyDevices, with the login standing, when the account may trust
// no more devices.
//
// account must be the account the Middleware counted the attempt against
// (its key function's value, e.g. lower-cased): for another one LoggedIn
// does nothing and returns an error, so that a request whose key names one
// account and whose handler logs in another never gets a device trusted
// for the first. Without a Middleware in ctx it returns an error too. Only
// the innermost lockout Middleware of a request is told.
func LoggedIn(ctx context.Context, account string) error {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	if a == nil {
		return errors.New("ratekit: lockout.LoggedIn: no lockout Middleware counted this request")
	}
	if account != a.key {
		return fmt.Errorf("ratekit: lockout.LoggedIn(%q): the attempt was counted against another account; pass the key function's value", account)
	}
	a.mu.Lock()
	if a.succeeded {
		a.mu.Unlock()
		return nil
	}
	a.succeeded = true
	a.mu.Unlock()
	lo := a.lo
	var err error
	if a.d.Trusted || a.keep {
		err = lo.Refund(ctx, a.d)
	} else {
		err = lo.Reset(ctx, a.key)
	}
	if err != nil || lo.slots == nil || a.d.Trusted {
		return err
	}
	token, expires, err := lo.TrustDevice(ctx, a.key)
	if err != nil {
		return err
	}
	http.SetCookie(a.w, lo.DeviceCookie(a.key, token, expires))
	return nil
}
