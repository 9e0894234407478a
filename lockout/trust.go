package lockout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ratekit/ratekit"
)

// ErrTooManyDevices is TrustDevice's answer for an account that has
// Devices.MaxDevices trusted devices already, had 2·MaxDevices trusted in
// the last 24 hours, or has no free slot (see
// docs/architecture.md#trusted-devices): the login stands, without a token.
var ErrTooManyDevices = errors.New("ratekit: the account has as many trusted devices as it may")

// A slot is one of an account's trusted devices, as core limits on the
// subject "<name>/device:<account>" (one subject, so one atomic call and one
// Redis hash tag for all of an account's devices):
//
//   - "device-<i>", a sliding log of the device's failures with a block of
//     the token's lifetime and a minute: the block is the device's
//     revocation. attempt counts a failure in it; revoke, the same log with
//     one attempt, starts the block on demand.
//   - "slot-<i>", a fixed window of one for the token's lifetime and a
//     minute: taken while a token of the slot can be valid, so a slot is
//     never handed out again while an earlier token of it lives. It is
//     taken together with "trusts", a sliding log of 2·MaxDevices a day
//     shared by the slots, so that nobody (a thief with the password) can
//     use up an account's slots faster than that.
//
// An account has slotCount slots whatever MaxDevices, so that a token's
// slot keeps its meaning when MaxDevices changes.
type slot struct {
	attempt, revoke, take *ratekit.Limiter
}

// newSlots builds the limiters of d's slots, and survey, which peeks at
// every slot's state in one call.
func newSlots(s ratekit.Store, d Devices) (slots []slot, survey *ratekit.Limiter, err error) {
	logs, takes := make([]ratekit.Limit, slotCount), make([]ratekit.Limit, slotCount)
	slots = make([]slot, slotCount)
	block := d.Lifetime + slotMargin
	trusts := ratekit.SlidingLog(int64(2*d.MaxDevices), 24*time.Hour).Named("trusts")
	for i := range slots {
		name := "device-" + strconv.Itoa(i)
		logs[i] = ratekit.SlidingLog(d.Failures, d.FailureWindow).Named(name).Block(block)
		takes[i] = ratekit.FixedWindow(1, block).Named("slot-" + strconv.Itoa(i))
		revoke := ratekit.SlidingLog(1, d.FailureWindow).Named(name).Block(block)
		if slots[i].attempt, err = ratekit.New(s, logs[i]); err != nil {
			return nil, nil, err
		}
		if slots[i].revoke, err = ratekit.New(s, revoke); err != nil {
			return nil, nil, err
		}
		if slots[i].take, err = ratekit.New(s, takes[i], trusts); err != nil {
			return nil, nil, err
		}
	}
	survey, err = ratekit.New(s, append(logs, takes...)...)
	return slots, survey, err
}

// AttemptDevice is Attempt for an attempt that may carry token, a device
// token (the device cookie's value, or gRPC metadata): a token that is
// valid for key counts the attempt against its device, in one store call,
// and the Decision is Trusted; the account's windows are neither asked nor
// charged. A device past Devices.Failures failures is revoked (for the
// token's lifetime and a minute) and, like any token that is not valid for
// key (tampered with, another account's, expired, signed by a retired key
// or under a longer Lifetime, too long, revoked), the attempt is then an
// Attempt without one; Decision.Revoked
// says the token was revoked now or before, so the client can drop it.
// Without Config.Devices, or with token "", AttemptDevice is Attempt.
func (lo *Lockout) AttemptDevice(ctx context.Context, key, token string) (Decision, error) {
	if lo.slots == nil || token == "" {
		return lo.Attempt(ctx, key)
	}
	i, ok := lo.verify(key, token, lo.now())
	return lo.attemptDevice(ctx, key, i, ok)
}

// attemptDevice is AttemptDevice for a token verified already: trusted
// (ok) for slot i, or not.
func (lo *Lockout) attemptDevice(ctx context.Context, key string, i int, ok bool) (Decision, error) {
	if !ok || key == "" {
		return lo.Attempt(ctx, key)
	}
	d, err := lo.do(ctx, lo.slots[i].attempt, lo.deviceSubject(key), lo.cfg.Name+".device", key, true)
	if err != nil || d.Allowed {
		d.Trusted = err == nil
		return d, err
	}
	revoked := d.blocked // refused for want of room in the store is no revocation
	d, err = lo.Attempt(ctx, key)
	d.Revoked = revoked
	return d, err
}

// TrustDevice takes a free slot of key's trusted devices and returns its
// signed token and when it expires (Devices.Lifetime from now, to the
// second); call it after a successful login without a trusted token, and
// send the token with DeviceCookie (LoggedIn does both for Middleware). It
// answers ErrTooManyDevices when the account has Devices.MaxDevices trusted
// devices (concurrent calls may each take one more), or had 2·MaxDevices
// devices trusted in the last 24 hours. It takes two store
// calls, and one more for each slot a concurrent login takes first.
func (lo *Lockout) TrustDevice(ctx context.Context, key string) (token string, expires time.Time, err error) {
	if lo.slots == nil {
		return "", time.Time{}, errors.New("ratekit: TrustDevice needs lockout.Config.Devices")
	}
	if key == "" {
		return "", time.Time{}, ratekit.ErrEmptyKey
	}
	ctx, cancel := lo.bound(ctx)
	defer cancel()
	subject := lo.deviceSubject(key)
	states, err := lo.survey(ctx, subject)
	if err != nil {
		return "", time.Time{}, err
	}
	var clean, used []int // free slots without, and with, failures of an earlier device
	live := 0
	for i, st := range states {
		switch {
		case st.revoked:
		case st.taken:
			live++
		case st.failures == 0:
			clean = append(clean, i)
		case st.failures < lo.devices.Failures: // a full log would revoke its new device at once
			used = append(used, i)
		}
	}
	slices.SortStableFunc(used, func(a, b int) int { return cmp.Compare(states[a].failures, states[b].failures) })
	if live >= lo.devices.MaxDevices {
		return "", time.Time{}, ErrTooManyDevices
	}
	// A slot's log is never reset here: a reset could lift a revocation
	// made meanwhile. A free slot whose earlier device failed within the
	// FailureWindow hands its new device those failures, so clean ones go
	// first.
	for _, i := range append(clean, used...) {
		d, err := lo.slots[i].take.Allow(ctx, subject)
		if err != nil {
			return "", time.Time{}, err
		}
		if !d.Allowed && d.States[1].Allowed { // taken by a concurrent login
			continue
		}
		if !d.Allowed { // 2·MaxDevices devices trusted in the last day
			return "", time.Time{}, ErrTooManyDevices
		}
		now := lo.now()
		expires = now.Add(lo.devices.Lifetime).Truncate(time.Second)
		return lo.sign(key, i, now, expires), expires, nil
	}
	return "", time.Time{}, ErrTooManyDevices
}

// RevokeDevices revokes every trusted device of key, e.g. after a password
// reset: no token issued before it is trusted again, on any instance that
// shares the store. Devices trusted afterwards are not affected. It takes
// one store call, and one or two more per device revoked.
func (lo *Lockout) RevokeDevices(ctx context.Context, key string) error {
	if lo.slots == nil {
		return errors.New("ratekit: RevokeDevices needs lockout.Config.Devices")
	}
	if key == "" {
		return ratekit.ErrEmptyKey
	}
	ctx, cancel := lo.bound(ctx)
	defer cancel()
	subject := lo.deviceSubject(key)
	states, err := lo.survey(ctx, subject)
	if err != nil {
		return err
	}
	for i, st := range states {
		if !st.taken || st.revoked {
			continue
		}
		// The one-attempt twin of the device's log refuses once the log has
		// an entry, which starts the block: at most two calls.
		blocked := false
		for range 2 {
			d, err := lo.slots[i].revoke.Allow(ctx, subject)
			if err != nil {
				return err
			}
			if !d.Allowed {
				blocked = d.Blocked
				break
			}
		}
		if !blocked {
			return fmt.Errorf("ratekit: the store did not keep the revocation of a device of %q (is it full?); try again", key)
		}
	}
	return nil
}

// slotState is what survey found of one slot.
type slotState struct {
	taken, revoked bool
	failures       int64 // in its log
}

// survey peeks at every slot of subject in one call.
func (lo *Lockout) survey(ctx context.Context, subject string) ([]slotState, error) {
	d, err := lo.surveyor.Peek(ctx, subject)
	if err != nil {
		return nil, err
	}
	n := len(lo.slots)
	if len(d.States) != 2*n {
		return nil, errors.New("ratekit: the store answered for other limits than the device slots")
	}
	out := make([]slotState, n)
	for i := range out {
		log := d.States[i]
		out[i] = slotState{taken: d.States[n+i].Remaining == 0, revoked: log.Blocked, failures: lo.devices.Failures - log.Remaining}
	}
	return out, nil
}

// deviceSubject is the subject of key's devices: apart from every account
// subject ("<name>:<account>"), as names have no '/'.
func (lo *Lockout) deviceSubject(key string) string { return lo.cfg.Name + "/device:" + key }
