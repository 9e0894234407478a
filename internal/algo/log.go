package algo

import "slices"

// SlidingLog keeps one entry per admitted request and counts them exactly
// in the window (now-window, now].
const SlidingLog = "log"

type slidingLog struct{ base }

func (*slidingLog) Caps() Caps { return Cacheable | SettlesAtCall }

func (*slidingLog) Validate(s *Spec, _ bool) Fault {
	var c check
	c.modifiers(s, takes{})
	c.logCount("quota", "a sliding log", s.Quota)
	c.window("window", s.Window)
	return c.Fault
}

// Decide: see algorithms.log in the engine.
func (*slidingLog) Decide(s *Spec, e *State, c Call, r *Result, next *State) {
	quota, windowUS, cost, nowUS := s.Quota, s.Window.Microseconds(), c.Cost, c.Now
	from := nowUS - windowUS
	var in []int64
	if e != nil {
		if i := slices.IndexFunc(e.Log, func(t int64) bool { return t > from }); i >= 0 {
			in = e.Log[i:]
		}
	}
	count := int64(len(in))
	r.Remaining = max(quota-count, 0)
	if count > 0 {
		r.ResetAfter = us(in[count-1] + windowUS - nowUS)
		r.EffectiveWindow = us(in[0] + windowUS - nowUS) // until the oldest leaves
	}
	if count+cost > quota {
		if cost > quota {
			r.Unsatisfiable = true
		} else {
			r.RetryAfter = us(in[count+cost-quota-1] + windowUS - nowUS)
		}
		return
	}
	r.Allowed = true
	if !c.Charge {
		return
	}
	r.Remaining -= cost
	r.ResetAfter = us(windowUS)
	if count == 0 {
		r.EffectiveWindow = us(windowUS)
	}
	*next = State{Log: make([]int64, 0, count+cost), ExpireMS: nowUS/1000 + windowUS/1000}
	next.Log = append(next.Log, in...)
	for range cost {
		next.Log = append(next.Log, nowUS)
	}
}

func (*slidingLog) GiveBack(s *Spec, e *State, end *int64, n, now int64) {
	if *end > now-s.Window.Microseconds() {
		e.Log, _ = dropAt(e.Log, *end, n)
	}
}

// Extra moves what e still holds of the charge to now, with the n more, so
// that the charge sits in one place.
func (*slidingLog) Extra(s *Spec, e *State, end, held, n, now int64) (next State, _, _ int64) {
	start := now - s.Window.Microseconds()
	next.ExpireMS = now/1000 + s.Window.Milliseconds()
	if e != nil {
		next.Log = slices.DeleteFunc(slices.Clone(e.Log), func(t int64) bool { return t <= start })
	}
	moved := int64(0)
	if end > start {
		next.Log, moved = dropAt(next.Log, end, held)
	}
	for range moved + n {
		next.Log = append(next.Log, now)
	}
	return next, now, moved + n
}

// dropAt removes up to n entries at time at from a log, the last first, and
// returns the log and how many it removed.
func dropAt(log []int64, at, n int64) ([]int64, int64) {
	dropped := int64(0)
	for k := len(log) - 1; k >= 0 && dropped < n; k-- {
		if log[k] == at {
			log = append(log[:k], log[k+1:]...)
			dropped++
		}
	}
	return log, dropped
}
