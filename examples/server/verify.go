package main

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
)

// The limits of the verification routes. A send must pass all three of
// verifyLimits (the day's budget with -sms-budget); a code may be checked
// verifyAttempts.Attempts times.
var (
	verifyPerIP          = ratekit.SlidingLog(10, time.Hour).Named("verify-ip")
	verifyPerDestination = ratekit.SlidingLog(3, 15*time.Minute).Named("verify-destination")
	verifyAttempts       = lockout.Window{Scope: "code", Attempts: 3, Window: 10 * time.Minute, Block: 10 * time.Minute}
)

// budgetKey is the one key of the daily budget: every send counts in it.
const budgetKey = "all"

// maxDestination is the longest destination accepted, in bytes (an email
// address's limit).
const maxDestination = 254

// verifier serves POST /verify/send and POST /verify/check.
type verifier struct {
	perIP, perDestination, budget *ratekit.Limiter
	ip                            ratekit.KeyFunc
	attempts                      *lockout.Lockout
	codes                         *codeBook
}

// newVerifier builds the verification routes' limits over s: budget
// messages a day in zone.
func newVerifier(s ratekit.Store, budget int64, zone *time.Location, obs observe.Observer) (*verifier, []string, error) {
	v := &verifier{ip: ratekit.ByIP(), codes: newCodeBook(codeLifetime)}
	daily := ratekit.Calendar(budget, calendar.Day, zone).Named("sms-budget")
	var err error
	for _, l := range []struct {
		to    **ratekit.Limiter
		limit ratekit.Limit
	}{{&v.perIP, verifyPerIP}, {&v.perDestination, verifyPerDestination}, {&v.budget, daily}} {
		if *l.to, err = ratekit.New(s, l.limit); err != nil {
			return nil, nil, err
		}
	}
	v.attempts, err = lockout.New(s, lockout.Config{Name: "verify", Windows: []lockout.Window{verifyAttempts}, Observer: obs})
	if err != nil {
		return nil, nil, err
	}
	limits := []string{
		"send, per client IP: " + verifyPerIP.String(),
		"send, per destination (from any address): " + verifyPerDestination.String(),
		"send, all destinations together: " + daily.String(),
		fmt.Sprintf("check, per code: %d attempts, then the code dies (429 TOO_MANY_ATTEMPTS); a code lives %s", verifyAttempts.Attempts, codeLifetime),
	}
	return v, limits, nil
}

// send answers POST /verify/send (form destination): once the send limits
// pass, a new code replaces the destination's, and the demo answers it
// (a real service sends it, and answers nothing of it). A refusal is the
// kit's 429 with Retry-After, counted nowhere.
func (v *verifier) send(w http.ResponseWriter, r *http.Request) {
	dest, ok := destination(w, r)
	if !ok {
		return
	}
	ip, err := v.ip(r)
	if err != nil {
		response.KeyError(err).Write(w, nil)
		return
	}
	if e := v.reserve(r.Context(), ip, dest); e != nil {
		e.Write(w, nil)
		return
	}
	c := v.codes.issue(dest)
	writeJSON(w, map[string]any{"destination": dest, "code": c.code, "expires_in": codeLifetime.String(),
		"demo": "a real service sends the code to the destination by SMS or email and never answers it; the demo sends nothing"})
}

// reserve takes one send from each limit in turn: the client IP's, the
// destination's, the day's budget. When one refuses, or the store fails,
// the earlier ones' sends are given back (Settle to 0), so a refused send
// counts nowhere, and the response to answer is returned. The sends taken
// stand: the limits hold no in-flight slots, so nothing needs ending.
func (v *verifier) reserve(ctx context.Context, ip, dest string) *response.Error {
	var taken []*ratekit.Reservation
	giveBack := func() {
		for _, res := range taken {
			if err := res.Settle(ctx, 0); err != nil {
				slog.Warn("ratekit demo: giving back a verification send", "error", err)
			}
		}
	}
	for _, step := range []struct {
		limiter *ratekit.Limiter
		key     string
	}{{v.perIP, ip}, {v.perDestination, dest}, {v.budget, budgetKey}} {
		res, err := step.limiter.Reserve(ctx, step.key, 1)
		switch {
		case err != nil:
			giveBack()
			slog.Warn("ratekit demo: verification send limits", "error", err)
			return response.Unavailable(time.Second)
		case !res.Decision.Allowed:
			giveBack()
			return ratekit.DeniedResponse(res.Decision, response.CodeRateLimited)
		}
		taken = append(taken, res)
	}
	return nil
}

// check answers POST /verify/check (form destination, code). Each code has
// its own counter, keyed by the destination and the code's serial: the
// attempt is recorded before the code is compared, so parallel guesses get
// verifyAttempts.Attempts in all; the next attempt is refused (429, even
// with the right code) and the code dies. The right code answers 200 and is
// used up; a wrong one, or no code pending, answers 422.
func (v *verifier) check(w http.ResponseWriter, r *http.Request) {
	dest, ok := destination(w, r)
	if !ok {
		return
	}
	c, ok := v.codes.pending(dest)
	if !ok {
		invalidCode(w, "No code is pending for this destination: send one.")
		return
	}
	counter := dest + "#" + c.serial
	d, err := v.attempts.Attempt(r.Context(), counter)
	if e := v.attempts.Response(d, err); e != nil {
		if err == nil { // refused, not a store failure: the code dies
			v.codes.drop(dest, c.serial)
		}
		e.Write(w, nil)
		return
	}
	given := r.PostFormValue("code")
	if subtle.ConstantTimeCompare([]byte(given), []byte(c.code)) != 1 || !v.codes.use(dest, c.serial) {
		invalidCode(w, "Wrong or expired code.") // the attempt stays counted
		return
	}
	if err := v.attempts.Reset(r.Context(), counter); err != nil { // the code is gone: only tidies the store
		slog.Warn("ratekit demo: resetting a code's attempts", "error", err)
	}
	writeJSON(w, map[string]any{"status": 200, "destination": dest, "message": "Verified."})
}

// destination returns the form's destination, trimmed and lower-cased (a
// real service would also bring phone numbers to one form, E.164), or
// answers 400 and reports false.
func destination(w http.ResponseWriter, r *http.Request) (string, bool) {
	dest := strings.ToLower(strings.TrimSpace(r.PostFormValue("destination")))
	if dest == "" || len(dest) > maxDestination {
		badRequest(w, fmt.Sprintf("destination must be a phone number or an email address of at most %d bytes", maxDestination))
		return "", false
	}
	return dest, true
}

// invalidCode answers 422 INVALID_CODE with message.
func invalidCode(w http.ResponseWriter, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	writeJSON(w, map[string]any{"status": 422, "code": "INVALID_CODE", "message": message})
}
