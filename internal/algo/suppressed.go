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

// Shape: the bucket width, which numbers the buckets.
func (*suppressed) Shape(s *Spec) string { return s.Precision.String() }

func (*suppressed) Args(s *Spec, _ int64) [3]int64 {
	return [3]int64{s.Quota, s.Hard, s.Window.Milliseconds()}
}

// Decide: see algorithms.suppressed in the engine. A charge writes the state
// with the call counted, admitted or not (see Commit), and reports after it.
func (*suppressed) Decide(s *Spec, e *State, call Call, r *Result, next *State) {
	soft, hard, cost := s.Quota, s.Hard, call.Cost
	w := slideOf(s, e, call.Now/1000)
	width := w.width
	scaled, scaledA := w.scaled(), w.fullA*width+w.oldA*(width-w.x)
	cw := cost * width
	if cost > hard {
		r.Remaining, r.Unsatisfiable = max((soft*width-scaled)/width, 0), true
		r.ResetAfter = w.resetAfter()
		return
	}
	r.Allowed = true
	if scaledA+cw > hard*width {
		r.Allowed, r.Suppression = false, 1
	} else if scaled+cw > soft*width {
		from := w.c
		if w.oldest >= 0 {
			from = w.oldest
		}
		span := min(max(w.nowMS-from*width, width), w.windowMS)
		p := float64(soft*width) * float64(span) / (float64(scaled+cw) * float64(w.windowMS))
		p *= float64(soft*width) * float64(span) / (float64(max(scaledA+cw, width)) * float64(w.windowMS))
		r.Suppression = max(0, 1-p)
		if float64(call.Draw)/(1<<53) >= p {
			r.Allowed = false
		}
	}
	if call.Charge {
		w.counts[w.c] += cost
		w.full, scaled, w.newest = w.full+cost, scaled+cw, w.c
	}
	r.Remaining = max((soft*width-scaled)/width, 0)
	r.ResetAfter = w.resetAfter()
	if !r.Allowed {
		if cost > soft {
			r.RetryAfter = r.ResetAfter
		} else {
			r.RetryAfter = ms(w.retry(w.full, (soft-cost)*width))
		}
	}
	if call.Charge {
		*next = w.next(w.counts[w.c], w.nowA)
	}
}

// Commit stores a charging call's count whatever its outcome, counting it
// as admitted in its bucket (the last) when the whole call is admitted.
func (*suppressed) Commit(next *State, admitted bool, cost int64) bool {
	if admitted {
		next.Buckets[len(next.Buckets)-1].A += cost
	}
	return len(next.Buckets) > 0
}
