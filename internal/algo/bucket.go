package algo

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// The bucket algorithms share GCRA's arithmetic: a theoretical arrival time
// (TAT) that each request moves by the emission interval; LeakyBucket alone
// may queue.
const (
	GCRA        = "gcra"
	TokenBucket = "token"
	LeakyBucket = "leaky"
)

type bucket struct{ base }

func (*bucket) Caps() Caps { return Cacheable | SettlesAtReset }

func (*bucket) Validate(s *Spec, _ bool) Fault {
	var c check
	c.modifiers(s, takes{queue: s.Algorithm == LeakyBucket})
	c.fail(math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0) || s.Rate <= 0, "rate", "must be a finite number above 0 (got %v)", s.Rate)
	c.window("period", s.Window)
	c.count("burst", s.Quota)
	c.fail(float64(s.Window.Microseconds()) < s.Rate, "rate", "must be at most one per microsecond (got %v per %s)", s.Rate, s.Window)
	c.fail(float64(s.Interval)*float64(s.Quota) > float64(bounds.MaxWindow), "burst", "× interval must be at most %s (got %d × %s)",
		bounds.MaxWindow, s.Quota, s.Interval)
	return c.Fault
}

// Derive sets the emission interval: period/rate rounded up to whole
// microseconds, an error below 1 µs per request that never drifts.
func (*bucket) Derive(s *Spec) {
	s.Interval = 0
	if !(s.Rate > 0) {
		return
	}
	us := math.Ceil(float64(s.Window.Microseconds()) / s.Rate)
	if us > float64(bounds.MaxWindow.Microseconds()) {
		s.Interval = bounds.MaxWindow + time.Microsecond
		return
	}
	s.Interval = time.Duration(us) * time.Microsecond
}

func (*bucket) Describe(s *Spec) string {
	d := fmt.Sprintf("%s: %s %s per %s, burst %d", s.Name, s.Algorithm, strconv.FormatFloat(s.Rate, 'g', -1, 64), s.Window, s.Quota)
	if s.MaxWait > 0 {
		d += fmt.Sprintf(", queue up to %s", s.MaxWait)
	}
	return d
}

func (*bucket) Args(s *Spec, _ int64) [3]int64 {
	return [3]int64{s.Interval.Microseconds(), s.Quota, s.MaxWait.Microseconds()}
}

// Header: the burst per the time it takes to refill.
func (*bucket) Header(s *Spec) (int64, time.Duration) {
	return s.Quota, time.Duration(min(float64(s.Interval)*float64(s.Quota), float64(bounds.MaxWindow)))
}

func (*bucket) Share(s *Spec, n int64) bool {
	s.Quota, s.Rate = max(s.Quota/n, 1), s.Rate/float64(n)
	return true
}

// tatOf returns the TAT of the live state e (nil: none) at now under s's
// numbers (see tat_of in the engine's gcra.lua). The used part of the
// burst carries over (carry.Used): a TAT written under another interval is
// read as that many intervals used, at most the burst, and counted in the
// new interval (Normalize then keeps it so); under the same interval, or
// with none recorded (a state of earlier releases), it stands, so a
// smaller burst admits again once the used part has drained below it.
func tatOf(s *Spec, e *State, now int64) int64 {
	if e == nil || e.Value <= now {
		return now
	}
	if interval := s.Interval.Microseconds(); e.Unit != 0 && e.Unit != interval {
		return now + int64(math.Ceil(min(float64(e.Value-now)/float64(e.Unit), float64(s.Quota))*float64(interval)))
	}
	return e.Value
}

// Normalize: a TAT written under another interval becomes tatOf's, in
// this one, as at in the engine's gcra.lua writes it back.
func (*bucket) Normalize(s *Spec, e *State, now int64) {
	if interval := s.Interval.Microseconds(); e.Unit != 0 && e.Unit != interval && e.Value > now {
		tat := tatOf(s, e, now)
		*e = State{Value: tat, ExpireMS: now/1000 + (tat-now+999)/1000, Unit: interval}
	}
}

// Decide: see algorithms.gcra in the engine.
func (*bucket) Decide(s *Spec, e *State, c Call, r *Result, next *State) {
	interval, burst, maxWait := s.Interval.Microseconds(), s.Quota, s.MaxWait.Microseconds()
	cost, nowUS := c.Cost, c.Now
	offset := interval * burst
	tat := tatOf(s, e, nowUS)
	r.Remaining = max((nowUS-tat+offset)/interval, 0)
	r.ResetAfter = us(tat - nowUS)
	if cost > burst {
		r.Unsatisfiable = true
		return
	}
	newTat := tat + interval*cost
	diff := nowUS - (newTat - offset)
	if diff < 0 {
		r.RetryAfter = us(-diff)
		return
	}
	var delay int64
	if maxWait > 0 {
		if delay = tat - nowUS; delay > maxWait {
			r.RetryAfter = us(delay - maxWait)
			return
		}
	}
	r.Allowed = true
	if !c.Charge {
		return
	}
	r.Remaining = diff / interval
	r.ResetAfter = us(newTat - nowUS)
	r.Delay = us(delay)
	ttlMS := (newTat - nowUS + 999) / 1000
	*next = State{Value: newTat, ExpireMS: nowUS/1000 + ttlMS, Unit: interval}
}

// End: the TAT after the charge.
func (*bucket) End(_ *Spec, next *State, _ int64) int64 { return next.Value }

// GiveBack moves the TAT back by what the charge holds, and the state's
// expiry to the TAT, as settle in gcra.lua does: a TAT written under another
// interval may be read as later than the one stored, and outlive it.
func (*bucket) GiveBack(s *Spec, e *State, end *int64, n, now int64) {
	if tat := tatOf(s, e, now); tat > now {
		held := max(min(n*s.Interval.Microseconds(), *end-now), 0)
		e.Value, e.Unit = max(tat-held, now), s.Interval.Microseconds()
		e.ExpireMS = now/1000 + (e.Value-now+999)/1000
		*end -= held
	}
}

// Extra moves the TAT by n more.
func (*bucket) Extra(s *Spec, e *State, _, held, n, now int64) (State, int64, int64) {
	tat := tatOf(s, e, now) + n*s.Interval.Microseconds()
	return State{Value: tat, ExpireMS: now/1000 + (tat-now+999)/1000, Unit: s.Interval.Microseconds()}, tat, held + n
}
