package algo

import (
	"fmt"
	"time"
)

// InFlight holds at most Quota slots of a subject at once; each slot is a
// lease of Window, renewed while its request runs.
const InFlight = "inflight"

// RetryInFlight is the RetryAfter of a denial by an InFlight limit: when a
// slot comes back no store can foresee, and 1 s is the shortest Retry-After.
const RetryInFlight = time.Second

// minLease is the shortest lease: renewals every quarter of it must have
// time to reach the store.
const minLease = 10 * time.Millisecond

type inFlight struct{ base }

func (*inFlight) Caps() Caps { return Holds }

func (*inFlight) Validate(s *Spec, shadow bool) Fault {
	var c check
	c.modifiers(s, takes{})
	c.logCount("slots", "an in-flight limit", s.Quota)
	c.fail(s.Window < minLease, "lease", "must be at least %s (got %s)", minLease, s.Window)
	c.fail(s.Block != 0, "block", "does not apply to an in-flight limit: a slot comes back when a request ends")
	c.fail(shadow, "shadow", "does not apply to an in-flight limit")
	c.window("lease", s.Window)
	return c.Fault
}

func (*inFlight) Describe(s *Spec) string {
	return fmt.Sprintf("%s: in flight %d, lease %s", s.Name, s.Quota, s.Window)
}

// Header: slots, not requests per window.
func (*inFlight) Header(s *Spec) (int64, time.Duration) { return s.Quota, 0 }

// Decide: see algorithms.inflight in the engine. An admitted charge (a
// reserve of cost 0 too) takes one slot whatever its cost. The state lives
// as long as its longest lease: a lease taken under a shorter Lease (new
// numbers) does not cut the others short.
func (*inFlight) Decide(s *Spec, e *State, c Call, r *Result, next *State) {
	live := int64(0)
	for i := 0; e != nil && i < len(e.Log); i += 2 {
		if e.Log[i] > c.Now {
			live++
		}
	}
	r.Remaining = max(s.Quota-live, 0)
	if (c.Cost > 0 || c.Charge) && live+1 > s.Quota {
		r.RetryAfter = RetryInFlight
		return
	}
	r.Allowed = true
	if !c.Charge {
		return
	}
	r.Remaining--
	expiry := c.Now + s.Window.Microseconds()
	*next = State{Log: make([]int64, 0, 2*live+2), ExpireMS: (expiry + 999) / 1000}
	if e != nil {
		next.ExpireMS = max(next.ExpireMS, e.ExpireMS)
	}
	for i := 0; e != nil && i < len(e.Log); i += 2 {
		if e.Log[i] > c.Now {
			next.Log = append(next.Log, e.Log[i], e.Log[i+1])
		}
	}
	next.Log = append(next.Log, expiry, c.Lease)
}

func (*inFlight) Release(e *State, lease int64) {
	for k := 0; k < len(e.Log); k += 2 {
		if e.Log[k+1] == lease {
			e.Log = append(e.Log[:k], e.Log[k+2:]...)
			return
		}
	}
}

func (*inFlight) Renew(s *Spec, e *State, lease, now int64) bool {
	expiry, found := now+s.Window.Microseconds(), false
	for k := 0; k < len(e.Log); k += 2 {
		if e.Log[k+1] == lease && e.Log[k] > now {
			e.Log[k], found = expiry, true
		}
	}
	if found {
		e.ExpireMS = max(e.ExpireMS, (expiry+999)/1000)
	}
	return found
}
