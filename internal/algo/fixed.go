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
	quota, windowMS := s.Quota, s.Window.Milliseconds()
	nowMS := c.Now / 1000
	count, ttlMS, expireMS := int64(0), windowMS, nowMS+windowMS
	if e != nil && e.ExpireMS > nowMS {
		count, ttlMS, expireMS = e.Value, e.ExpireMS-nowMS, e.ExpireMS
	}
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
	if e.ExpireMS > now/1000 && sameWindow(s, e.ExpireMS, *end) {
		e.Value = max(e.Value-n, 0)
		if e.Value == 0 { // an emptied window is no window: the next charge starts one
			e.ExpireMS = 0
		}
	}
}

// Extra adds n to the charged window while it lives, else starts a window.
func (*fixed) Extra(s *Spec, e *State, end, held, n, now int64) (State, int64, int64) {
	nowMS := now / 1000
	if e != nil && e.ExpireMS > nowMS {
		if !sameWindow(s, e.ExpireMS, end) {
			held = 0
		}
		return State{Value: e.Value + n, ExpireMS: e.ExpireMS}, e.ExpireMS * 1000, held + n
	}
	next := State{Value: n, ExpireMS: nowMS + s.Window.Milliseconds()}
	return next, next.ExpireMS * 1000, n
}

// sameWindow reports whether a window ending at endMS is the one a receipt
// records ending at endUS: within half a window, since two windows of one
// subject end a window apart and the engine reads an end to the ms.
func sameWindow(s *Spec, endMS, endUS int64) bool {
	d := endMS*1000 - endUS
	return max(d, -d) < s.Window.Microseconds()/2
}
