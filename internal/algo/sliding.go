package algo

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// SlidingWindow estimates the requests in the window from buckets of width
// Precision: the oldest bucket, partly outside, counts by its overlap.
const SlidingWindow = "sliding"

// DefaultWidth is the default bucket width of a window: a tenth of it when
// that is whole milliseconds, else the window itself.
func DefaultWidth(window time.Duration) time.Duration {
	if window%(10*time.Millisecond) == 0 {
		return window / 10
	}
	return window
}

type sliding struct{ base }

func (*sliding) Caps() Caps { return Cacheable | SettlesAtCall }

func (*sliding) Validate(s *Spec, _ bool) Fault {
	c := counted(s, takes{precision: s.Precision}, "quota")
	c.window("precision", s.Precision)
	if c.Field == "" { // a precision of 1 ms or more
		c.fail(s.Window%s.Precision != 0, "precision", "%s must divide the window %s", s.Precision, s.Window)
		c.fail(s.Window/s.Precision > 1000, "precision", "%s makes more than 1000 buckets of the window %s", s.Precision, s.Window)
		c.fail(float64(s.Quota)*float64(s.Precision.Milliseconds()) >= bounds.MaxQuota, "quota", "× bucket width in ms must stay below 2^53")
	}
	return c.Fault
}

func (*sliding) Describe(s *Spec) string {
	return fmt.Sprintf("%s: sliding %d per %s, buckets of %s", s.Name, s.Quota, s.Window, s.Precision)
}

func (*sliding) Args(s *Spec) [3]int64 {
	return [3]int64{s.Quota, s.Window.Milliseconds(), s.Precision.Milliseconds()}
}

// Decide: see lua/sliding.lua in store/redisengine. With now in bucket c, the
// window start lies in bucket o: buckets o+1..c count in full, bucket o by
// its overlap. Estimates are compared multiplied by width, in integers.
func (*sliding) Decide(s *Spec, e *State, call Call, r *Result, next *State) {
	quota, windowMS, width := s.Quota, s.Window.Milliseconds(), s.Precision.Milliseconds()
	cost, nowMS := call.Cost, call.Now/1000
	c := nowMS / width
	o := c - windowMS/width
	counts := map[int64]int64{}
	newest, full := int64(-1), int64(0)
	if e != nil {
		for _, b := range e.Buckets {
			if b.Idx >= o && b.Idx <= c && b.N > 0 {
				counts[b.Idx] = b.N
				if b.Idx > o {
					full += b.N
				}
				newest = max(newest, b.Idx)
			}
		}
	}
	x := nowMS % width
	scaled := full*width + counts[o]*(width-x)
	r.Remaining = max((quota*width-scaled)/width, 0)
	if newest >= 0 {
		r.ResetAfter = ms((newest+1)*width + windowMS - nowMS)
	}
	need := (quota - cost) * width
	if scaled > 0 && !(call.Charge && cost <= quota && scaled <= need) { // a charge reports the state after it
		r.EffectiveWindow = ms(slideWindow(counts, o, c, full, x, r.Remaining, quota, width, windowMS, nowMS))
	}
	if cost > quota {
		r.Unsatisfiable = true
		return
	}
	if scaled > need {
		r.RetryAfter = ms(slideRetry(counts, o, full, x, need, width, windowMS, nowMS))
		return
	}
	r.Allowed = true
	if !call.Charge {
		return
	}
	ttl := (c+1)*width + windowMS - nowMS
	r.Remaining = (quota*width - scaled - cost*width) / width
	r.ResetAfter = ms(ttl)
	*next = State{ExpireMS: nowMS + ttl}
	if e != nil {
		for _, b := range e.Buckets {
			if b.Idx >= o && b.Idx != c {
				next.Buckets = append(next.Buckets, b)
			}
		}
	}
	next.Buckets = append(next.Buckets, Bucket{Idx: c, N: counts[c] + cost})
	counts[c] += cost // the state after the charge, for its effective window
	r.EffectiveWindow = ms(slideWindow(counts, o, c, full+cost, x, r.Remaining, quota, width, windowMS, nowMS))
}

// slideWindow returns the ms until one more request could pass if the r
// remaining ones were sent now (see slide_window in the engine): the
// effective window of RateLimit. counts is left as it was.
func slideWindow(counts map[int64]int64, o, c, full, x, r, quota, width, windowMS, nowMS int64) int64 {
	counts[c] += r
	defer func() { counts[c] -= r }()
	return slideRetry(counts, o, full+r, x, (quota-1)*width, width, windowMS, nowMS)
}

// slideRetry returns the ms until a bucketed window estimate leaves room
// (see slide_retry in the engine): with the window start sliding forward
// bucket by bucket from x in bucket o, the first moment
// full*width + counts[b]*(width-x) <= need. full sums buckets o+1..c.
func slideRetry(counts map[int64]int64, o, full, x, need, width, windowMS, nowMS int64) int64 {
	for b := o; ; b, x = b+1, 0 {
		if b > o {
			full -= counts[b]
		}
		n, room := counts[b], need-full*width
		if room < 0 {
			continue
		}
		at := x
		if n > 0 {
			at = max(x, width-room/n)
		}
		if at < width {
			return b*width + at + windowMS - nowMS
		}
	}
}

// End: the call's time.
func (*sliding) End(_ *Spec, _ *State, now int64) int64 { return now }

func (*sliding) GiveBack(s *Spec, e *State, end *int64, n, _ int64) {
	idx := *end / 1000 / s.Precision.Milliseconds()
	for k := range e.Buckets {
		if e.Buckets[k].Idx == idx {
			e.Buckets[k].N = max(e.Buckets[k].N-n, 0)
		}
	}
}

// Extra moves what e still holds of the charge to now, with the n more, so
// that the charge sits in one place.
func (*sliding) Extra(s *Spec, e *State, end, held, n, now int64) (next State, _, _ int64) {
	width, windowMS := s.Precision.Milliseconds(), s.Window.Milliseconds()
	c, from := now/1000/width, end/1000/width
	o := c - windowMS/width
	next.ExpireMS = (c+1)*width + windowMS
	moved := int64(0)
	if e != nil {
		for _, b := range e.Buckets {
			if b.Idx >= o {
				next.Buckets = append(next.Buckets, b)
			}
		}
	}
	for k := range next.Buckets {
		if b := &next.Buckets[k]; b.Idx == from {
			moved = min(held, b.N)
			b.N -= moved
		}
	}
	if k := len(next.Buckets) - 1; k >= 0 && next.Buckets[k].Idx == c {
		next.Buckets[k].N += moved + n
	} else {
		next.Buckets = append(next.Buckets, Bucket{Idx: c, N: moved + n})
	}
	return next, now, moved + n
}
