package algo

import (
	"fmt"
	"math"

	"github.com/ratekit/ratekit/internal/bounds"
)

// Suppressed counts every call, admitted or declined, in a sliding window of
// buckets, and admits past its soft limit (Quota) with a probability, never
// past its hard limit (see ratekit.Suppressed).
const Suppressed = "suppressed"

type suppressed struct{ base }

func (*suppressed) Caps() Caps { return Draws }

func (*suppressed) Validate(s *Spec, _ bool) Fault {
	c := counted(s, takes{precision: DefaultWidth(s.Window), factor: true}, "soft limit")
	c.fail(math.IsNaN(s.Factor) || math.IsInf(s.Factor, 0) || s.Factor < 1, "factor", "must be a finite number of at least 1 (got %v)", s.Factor)
	c.fail(float64(s.Hard)*float64(s.Precision.Milliseconds()) >= bounds.MaxQuota, "factor",
		"makes a hard limit (%d) × bucket width in ms at or above 2^53", s.Hard)
	return c.Fault
}

// Derive sets the hard limit, floor(soft × factor).
func (*suppressed) Derive(s *Spec) {
	h := math.Floor(float64(s.Quota) * s.Factor)
	if !(h < bounds.MaxQuota+1) { // also NaN
		h = bounds.MaxQuota + 1
	}
	s.Hard = int64(h)
}

func (*suppressed) Describe(s *Spec) string {
	return fmt.Sprintf("%s: suppressed %d per %s, hard %d", s.Name, s.Quota, s.Window, s.Hard)
}

func (*suppressed) Args(s *Spec) [3]int64 { return [3]int64{s.Quota, s.Hard, s.Window.Milliseconds()} }

// Decide: see algorithms.suppressed in the engine. When charging it writes,
// admitting or not, the state with the call counted (see Commit), and the
// result describes the window after the count.
func (*suppressed) Decide(s *Spec, e *State, call Call, r *Result, next *State) {
	soft, hard, cost := s.Quota, s.Hard, call.Cost
	windowMS, width := s.Window.Milliseconds(), s.Precision.Milliseconds()
	nowMS := call.Now / 1000
	c := nowMS / width
	o := c - windowMS/width
	x := nowMS % width
	counts := map[int64]int64{}
	var full, fullA, oldA, admittedNow int64
	oldest, newest := int64(-1), int64(-1)
	var buckets []Bucket
	if e != nil {
		buckets = e.Buckets
	}
	for _, b := range buckets {
		if b.Idx < o || b.Idx > c {
			continue
		}
		if b.Idx == c {
			admittedNow = b.A
		}
		if b.N > 0 {
			counts[b.Idx] = b.N
			if b.Idx > o {
				full += b.N
			}
			if oldest < 0 || b.Idx < oldest {
				oldest = b.Idx
			}
			newest = max(newest, b.Idx)
		}
		if b.A > 0 {
			if b.Idx > o {
				fullA += b.A
			} else {
				oldA = b.A
			}
		}
	}
	scaled := full*width + counts[o]*(width-x)
	scaledA := fullA*width + oldA*(width-x)
	cw := cost * width
	reset := func() {
		if newest >= 0 {
			r.ResetAfter = ms((newest+1)*width + windowMS - nowMS)
		}
	}
	if cost > hard {
		r.Remaining, r.Unsatisfiable = max((soft*width-scaled)/width, 0), true
		reset()
		return
	}
	r.Allowed = true
	if scaledA+cw > hard*width {
		r.Allowed, r.Suppression = false, 1
	} else if scaled+cw > soft*width {
		from := c
		if oldest >= 0 {
			from = oldest
		}
		span := min(max(nowMS-from*width, width), windowMS)
		p := float64(soft*width) * float64(span) / (float64(scaled+cw) * float64(windowMS))
		p *= float64(soft*width) * float64(span) / (float64(max(scaledA+cw, width)) * float64(windowMS))
		r.Suppression = max(0, 1-p)
		if float64(call.Draw)/(1<<53) >= p {
			r.Allowed = false
		}
	}
	if call.Charge {
		counts[c] += cost
		full, scaled, newest = full+cost, scaled+cw, c
	}
	r.Remaining = max((soft*width-scaled)/width, 0)
	reset()
	if !r.Allowed {
		if cost > soft {
			r.RetryAfter = r.ResetAfter
		} else {
			r.RetryAfter = ms(slideRetry(counts, o, full, x, (soft-cost)*width, width, windowMS, nowMS))
		}
	}
	if !call.Charge {
		return
	}
	ttl := (c+1)*width + windowMS - nowMS
	*next = State{ExpireMS: nowMS + ttl, Buckets: make([]Bucket, 0, len(buckets)+1)}
	for _, b := range buckets {
		if b.Idx >= o && b.Idx != c {
			next.Buckets = append(next.Buckets, b)
		}
	}
	next.Buckets = append(next.Buckets, Bucket{Idx: c, N: counts[c], A: admittedNow})
}

// Commit stores a charging call's count whatever its outcome, counting it
// as admitted in its bucket (the last) when the whole call is admitted.
func (*suppressed) Commit(next *State, admitted bool, cost int64) bool {
	if admitted {
		next.Buckets[len(next.Buckets)-1].A += cost
	}
	return len(next.Buckets) > 0
}
