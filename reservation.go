package ratekit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// errCannotSettle is Reserve's error for a store that cannot settle.
var errCannotSettle = errors.New("ratekit: the store cannot settle charges or hold in-flight slots for these limits (its prepared form is no store.Settler); use store/memstore or a Redis store, or wrappers of them whose limits are not leased")

// Reserve charges cost to key as AllowN does, and keeps what it charged in
// a Reservation, so that the charge can be settled when the real cost is
// known (Settle) and the request's InFlight slots released. A Limiter with
// InFlight limits admits requests only through Reserve (Middleware does it
// for you; see InFlight). A denied call returns a Reservation too, holding
// the Decision, with nothing to settle. The store must support settling
// (store/memstore and the Redis stores do); shadow limits are charged as by
// AllowN and never settled.
func (l *Limiter) Reserve(ctx context.Context, key string, cost int64) (*Reservation, error) {
	return l.set.Load().reserve(ctx, key, cost, false)
}

// reserve is Reserve. A guarded reservation (a Guard's) leaves the gate
// only when Guard.Run ends it, not when its handler settles it, and a
// store error returns, with the error, a Reservation that holds the
// request's place in the gate when it has one, for the Guard to end.
func (l *limitSet) reserve(ctx context.Context, key string, cost int64, guarded bool) (*Reservation, error) {
	if err := bounds.CheckCost(cost); err != nil {
		return nil, err
	}
	if key == "" {
		return nil, ErrEmptyKey
	}
	if l.settler == nil {
		return nil, errCannotSettle
	}
	if l.enforcedP == nil { // shadow limits alone: decided as AllowN does, nothing to settle
		d, err := l.decide(ctx, key, cost, false)
		if err != nil {
			return nil, err
		}
		return &Reservation{Decision: d, set: l, key: key}, nil
	}
	r := &Reservation{set: l, key: key, guarded: guarded}
	var denial Decision
	over := false
	if l.gate != nil {
		var ok bool
		denial, ok, over = l.gate.enter(key)
		if !ok {
			r.Decision = denial
			r.Decision.policy = l.policyOf(&r.Decision)
			return r, nil
		}
		r.gated = true
	}
	sent := time.Now() // the slots live at least a lease from here
	d, err := l.settler.Reserve(ctx, key, cost)
	if err != nil {
		if over && !isRequestError(err) {
			// A probe of a subject this instance holds at capacity: without
			// the store's answer, what the instance knows refuses it, so that
			// failing open never runs more than n here.
			r.leaveGate()
			r.Decision = denial
			r.Decision.policy = l.policyOf(&r.Decision)
			return r, nil
		}
		if r.gated && guarded {
			return r, err
		}
		r.leaveGate()
		return nil, err
	}
	d.policy = l.policyOf(&d)
	if r.gated {
		l.gate.learn(key, &d) // an override of the InFlight limit: the count it allows
	}
	if !d.Allowed {
		r.leaveGate()
	} else if l.shadowP != nil {
		_ = l.addShadow(ctx, key, cost, false, &d) // the charge is made: a shadow error changes nothing
	}
	r.Decision = d
	if d.Receipt != nil {
		r.receipt = *d.Receipt
		if r.receipt.Lease != "" && l.lease > 0 {
			r.mu.Lock() // the first renewal may run before the assignment
			r.renewed, r.timer = sent, time.AfterFunc(time.Until(sent.Add(l.lease/4)), r.renew)
			r.mu.Unlock()
		}
	}
	return r, nil
}

// A Reservation is an admitted call's charge, made before the real cost was
// known, and the request's InFlight slots. Settle it once the cost is known,
// or Release its slots when the charge stands as made: like a lock, it keeps
// its slots (renewed) until it is ended. Build it with Limiter.Reserve; the
// zero Reservation is not usable. It is safe for concurrent use.
type Reservation struct {
	// Decision is the Limiter's decision on the call. Its Receipt is nil
	// for a denial; an admission of cost 0 has one too, so that its charge
	// can be settled upward, and holds its InFlight slots.
	Decision Decision

	set *limitSet // the limits it was made with: their settler settles the charge
	key string

	mu       sync.Mutex
	receipt  Receipt     // Cost is what stands charged; Lease "" once released
	timer    *time.Timer // renews the slots while held
	renewed  time.Time   // when the last Reserve or Renew that held the slots was sent
	released func()      // reports the slots gone to an observer, once; may be nil
	// gated: the request holds a place in its Limiter's gate until its
	// Reservation ends; guarded: only Guard.Run ends it (see reserve).
	gated, guarded bool
}

// onRelease has f called once when the reservation's slots are released or
// lapse, and reports whether it holds slots.
func (r *Reservation) onRelease(f func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.receipt.Lease == "" {
		return false
	}
	r.released = f
	return true
}

// slotsGone reports the slots released or lapsed, once. The caller holds
// r.mu.
func (r *Reservation) slotsGone() {
	r.receipt.Lease = ""
	if f := r.released; f != nil {
		r.released = nil
		f()
	}
}

// Settle sets the reservation's charge to cost, the real cost: it refunds
// what was charged beyond it, or charges the extra, and releases the
// request's InFlight slots. A refund gives back only what the charge still
// holds in each limit, never lifting a block; an extra charge is added even
// past the limit (see docs/architecture.md). Each call moves the charge to
// its cost; on a denied Reservation Settle does nothing.
//
// Settle ignores ctx's cancellation and bounds itself by ctx's deadline but
// never below DefaultTimeout, so a handler may pass the request's context.
// The first Settle or Release ends the request for the instance's count of
// in-flight requests, unless a Guard made the Reservation: it keeps its
// slots and place until its handler returns.
func (r *Reservation) Settle(ctx context.Context, cost int64) error {
	if err := bounds.CheckCost(cost); err != nil {
		return err
	}
	return r.end(ctx, cost, r != nil && !r.guarded)
}

// Release releases the request's InFlight slots and keeps the charge as it
// stands; it does nothing once they are released. When the store cannot be
// reached the slots are no longer renewed, and lapse within one lease. Its
// context and its end of the request are as Settle's.
func (r *Reservation) Release(ctx context.Context) error {
	return r.end(ctx, -1, true)
}

// end is Settle and Release, with their context and their end of the
// request (a Guard's reservation leaves the gate in Guard.Run).
func (r *Reservation) end(ctx context.Context, cost int64, release bool) error {
	if r == nil {
		return nil
	}
	if !r.guarded {
		defer r.leaveGate() // after the store's slots: never fewer counted here than held there
	}
	sctx, cancel := context.WithoutCancel(ctx), noCancel
	if d, ok := ctx.Deadline(); ok {
		if least := time.Now().Add(DefaultTimeout); d.Before(least) {
			d = least
		}
		sctx, cancel = context.WithDeadline(sctx, d)
	}
	defer cancel()
	return r.settle(sctx, cost, release)
}

// settle moves the charge to cost (-1: leaves it) and, when release is set,
// releases the slots, in one store call, or none when nothing changes.
func (r *Reservation) settle(ctx context.Context, cost int64, release bool) error {
	if r.Decision.Receipt == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rc := r.receipt
	if cost < 0 {
		cost = rc.Cost
	}
	if !release {
		rc.Lease = ""
	}
	if cost == rc.Cost && rc.Lease == "" {
		return nil
	}
	if rc.Lease != "" && r.timer != nil {
		r.timer.Stop()
	}
	rc.Ends, rc.Held = append([]int64(nil), rc.Ends...), append([]int64(nil), rc.Held...) // the store updates its copy
	if err := r.set.settler.Settle(ctx, r.key, &rc, cost); err != nil {
		if release && r.receipt.Lease != "" {
			r.slotsGone() // no longer renewed: the slots lapse within one lease
		}
		return fmt.Errorf("ratekit: settling a reservation: %w", err)
	}
	lease := r.receipt.Lease
	r.receipt = rc
	r.receipt.Lease = lease
	if release && lease != "" {
		r.slotsGone()
	}
	return nil
}

// renew renews the reservation's slots and arms the next renewal, until
// they are released or lost (a lapsed lease is not taken again: its slot
// may be another request's now). Attempts fall every quarter of the lease
// from the last renewal that held, each ending by the next point, so the
// slots outlast two failed renewals in a row.
func (r *Reservation) renew() {
	r.mu.Lock()
	rc, renewed := r.receipt, r.renewed
	r.mu.Unlock()
	if rc.Lease == "" {
		return
	}
	every := r.set.lease / 4
	sent := time.Now()
	next := renewed.Add((max(sent.Sub(renewed)/every, 1) + 1) * every) // after this attempt's point (a late timer skips points)
	ctx, cancel := context.WithDeadline(context.Background(), sent.Add(min(next.Sub(sent), time.Second)))
	held, err := r.set.settler.Renew(ctx, r.key, &rc)
	cancel()
	r.mu.Lock()
	switch {
	case r.receipt.Lease == "": // released meanwhile
	case err == nil && !held:
		// A slot lapsed; those of other InFlight limits were just renewed:
		// release them (outside the lock) rather than hold them a lease more.
		rc = r.receipt
		rc.Ends, rc.Held = append([]int64(nil), rc.Ends...), append([]int64(nil), rc.Held...)
		r.slotsGone()
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), min(every, time.Second))
		_ = r.set.settler.Settle(ctx, r.key, &rc, rc.Cost)
		cancel()
		return
	case err == nil:
		r.renewed = sent
		r.timer.Reset(time.Until(sent.Add(every)))
	default: // failed: tried again at the next point
		r.timer.Reset(time.Until(next))
	}
	r.mu.Unlock()
}
