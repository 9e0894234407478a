package algo

// FixedWindow counts requests per window; the window starts with the
// subject's first request and its counter expires with it.
const FixedWindow = "fixed"

type fixed struct{ base }

func (*fixed) Caps() Caps { return Cacheable | Leasable | SettlesAtReset }

func (*fixed) Validate(s *Spec, _ bool) Fault { return counted(s, takes{}, "quota").Fault }

// Decide: see lua/fixed.lua in store/redisengine. At TTL 0 the engine, like
// PTTL, starts a new window.
func (*fixed) Decide(s *Spec, e *State, c Call, r *Result, next *State) {
	counter(s.Quota, c.Now/1000+s.Window.Milliseconds(), e, c, r, next)
}

// counter decides c against a counter of quota, the live state e (live
// while it has not expired), or a new window that would end at newExpireMS:
// the fixed window's rule, and the calendar's.
func counter(quota, newExpireMS int64, e *State, c Call, r *Result, next *State) {
	nowMS := c.Now / 1000
	count, expireMS := int64(0), newExpireMS
	if e != nil && e.ExpireMS > nowMS {
		count, expireMS = e.Value, e.ExpireMS
	}
	ttlMS := expireMS - nowMS
	r.Allowed = count+c.Cost <= quota
	after := count
	if r.Allowed && c.Charge {
		after += c.Cost
	}
	r.Remaining = max(quota-after, 0)
	if after > 0 {
		r.ResetAfter = ms(ttlMS)
	}
	if !r.Allowed {
		if c.Cost > quota {
			r.Unsatisfiable = true
		} else {
			r.RetryAfter = ms(ttlMS)
		}
	}
	*next = State{Value: after, ExpireMS: expireMS}
}

// End: the window's end.
func (*fixed) End(_ *Spec, next *State, _ int64) int64 { return next.ExpireMS * 1000 }

func (*fixed) GiveBack(s *Spec, e *State, end *int64, n, now int64) {
	giveBack(e, *end, n, now, s.Window.Microseconds()/2)
}

// giveBack gives n back to the charged window, which ends within near (µs)
// of end, while it lives.
func giveBack(e *State, end, n, now, near int64) {
	if e.ExpireMS > now/1000 && sameWindow(e.ExpireMS, end, near) {
		e.Value = max(e.Value-n, 0)
		if e.Value == 0 { // an emptied window is no window: the next charge starts one
			e.ExpireMS = 0
		}
	}
}

// Extra adds n to the charged window while it lives, else starts a window.
func (*fixed) Extra(s *Spec, e *State, end, held, n, now int64) (State, int64, int64) {
	return extra(e, end, held, n, now, now/1000+s.Window.Milliseconds(), s.Window.Microseconds()/2)
}

// extra adds n to the live window (which holds held of the charge when it
// ends within near of end, the charged one's), else starts a window that
// ends at newExpireMS.
func extra(e *State, end, held, n, now, newExpireMS, near int64) (State, int64, int64) {
	if e != nil && e.ExpireMS > now/1000 {
		if !sameWindow(e.ExpireMS, end, near) {
			held = 0
		}
		return State{Value: e.Value + n, ExpireMS: e.ExpireMS}, e.ExpireMS * 1000, held + n
	}
	return State{Value: n, ExpireMS: newExpireMS}, newExpireMS * 1000, n
}

// sameWindow reports whether a window ending at endMS is the one a receipt
// records ending at endUS: whether their ends, in whole ms, are within near
// (µs), less than the time between two windows' ends (a fixed window's: half
// a window). A receipt of the Redis engine records a fixed window's end as
// the call's time plus the PTTL it read, up to 999 µs past the end: its ms
// is the end (same_window in lua/fixed.lua).
func sameWindow(endMS, endUS, near int64) bool {
	d := (endMS - endUS/1000) * 1000
	return max(d, -d) < near
}
