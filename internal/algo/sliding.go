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

// Shape: the bucket width, which numbers the buckets.
func (*sliding) Shape(s *Spec) string { return s.Precision.String() }

func (*sliding) Args(s *Spec, _ int64) [3]int64 {
	return [3]int64{s.Quota, s.Window.Milliseconds(), s.Precision.Milliseconds()}
}

// A slide is a window of buckets at nowMS (see lua/sliding.lua in
// store/redisengine): now lies in bucket c, the window starts x ms into
// bucket o, which counts by its overlap; estimates are integers times width.
type slide struct {
	width, windowMS, nowMS, c, o, x int64
	buckets                         []Bucket        // the state's
	counts                          map[int64]int64 // the live buckets' counts, by index
	full                            int64
	oldest, newest                  int64 // of the buckets that count; -1: none
	fullA, oldA, nowA               int64 // suppressed: the admitted of o+1..c, of o, of c
}

// slideOf reads the live buckets of e (nil: none) for the limit s at nowMS.
func slideOf(s *Spec, e *State, nowMS int64) slide {
	width, windowMS := s.Precision.Milliseconds(), s.Window.Milliseconds()
	w := slide{width: width, windowMS: windowMS, nowMS: nowMS, c: nowMS / width, x: nowMS % width,
		counts: map[int64]int64{}, oldest: -1, newest: -1}
	w.o = w.c - windowMS/width
	if e != nil {
		w.buckets = e.Buckets
	}
	for _, b := range w.buckets {
		if b.Idx < w.o || b.Idx > w.c {
			continue
		}
		if b.Idx == w.o {
			w.oldA = b.A
		} else {
			w.full, w.fullA = w.full+b.N, w.fullA+b.A
		}
		if b.Idx == w.c {
			w.nowA = b.A
		}
		if b.N > 0 {
			w.counts[b.Idx] = b.N
			if w.oldest < 0 || b.Idx < w.oldest {
				w.oldest = b.Idx
			}
			w.newest = max(w.newest, b.Idx)
		}
	}
	return w
}

// scaled is the window's estimate, times width.
func (w *slide) scaled() int64 { return w.full*w.width + w.counts[w.o]*(w.width-w.x) }

// ttl is the ms a state charged now lives.
func (w *slide) ttl() int64 { return (w.c+1)*w.width + w.windowMS - w.nowMS }

// resetAfter is when the newest bucket that counts leaves the window.
func (w *slide) resetAfter() time.Duration {
	if w.newest < 0 {
		return 0
	}
	return ms((w.newest+1)*w.width + w.windowMS - w.nowMS)
}

// next returns the live buckets but c's, then c with count n, admitted a.
func (w *slide) next(n, a int64) State {
	next := State{ExpireMS: w.nowMS + w.ttl(), Buckets: make([]Bucket, 0, len(w.buckets)+1)}
	for _, b := range w.buckets {
		if b.Idx >= w.o && b.Idx != w.c {
			next.Buckets = append(next.Buckets, b)
		}
	}
	next.Buckets = append(next.Buckets, Bucket{Idx: w.c, N: n, A: a})
	return next
}

// Decide: see lua/sliding.lua in store/redisengine.
func (*sliding) Decide(s *Spec, e *State, call Call, r *Result, next *State) {
	quota, cost := s.Quota, call.Cost
	w := slideOf(s, e, call.Now/1000)
	scaled := w.scaled()
	r.Remaining = max((quota*w.width-scaled)/w.width, 0)
	r.ResetAfter = w.resetAfter()
	need := (quota - cost) * w.width
	if scaled > 0 && !(call.Charge && cost <= quota && scaled <= need) { // a charge reports the state after it
		r.EffectiveWindow = ms(w.effective(r.Remaining, quota))
	}
	if cost > quota {
		r.Unsatisfiable = true
		return
	}
	if scaled > need {
		r.RetryAfter = ms(w.retry(w.full, need))
		return
	}
	r.Allowed = true
	if !call.Charge {
		return
	}
	r.Remaining = (quota*w.width - scaled - cost*w.width) / w.width
	r.ResetAfter = ms(w.ttl())
	*next = w.next(w.counts[w.c]+cost, 0)
	w.counts[w.c] += cost // the state after the charge, for its effective window
	w.full += cost
	r.EffectiveWindow = ms(w.effective(r.Remaining, quota))
}

// effective returns the ms until one more request could pass if the r
// remaining ones were sent now (slide_window in the engine).
func (w *slide) effective(r, quota int64) int64 {
	w.counts[w.c] += r
	defer func() { w.counts[w.c] -= r }()
	return w.retry(w.full+r, (quota-1)*w.width)
}

// retry returns the ms until the estimate, with full counting the buckets
// after o, leaves need of room (slide_retry in the engine).
func (w *slide) retry(full, need int64) int64 {
	width := w.width
	for b, x := w.o, w.x; ; b, x = b+1, 0 {
		if b > w.o {
			full -= w.counts[b]
		}
		n, room := w.counts[b], need-full*width
		if room < 0 {
			continue
		}
		at := x
		if n > 0 {
			at = max(x, width-room/n)
		}
		if at < width {
			return b*width + at + w.windowMS - w.nowMS
		}
	}
}

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
	w := slideOf(s, e, now/1000)
	from, moved := end/1000/w.width, int64(0)
	next.ExpireMS = w.nowMS + w.ttl()
	for _, b := range w.buckets {
		if b.Idx < w.o {
			continue
		}
		if b.Idx == from {
			moved = min(held, b.N)
			b.N -= moved
		}
		next.Buckets = append(next.Buckets, b)
	}
	if k := len(next.Buckets) - 1; k >= 0 && next.Buckets[k].Idx == w.c {
		next.Buckets[k].N += moved + n
	} else {
		next.Buckets = append(next.Buckets, Bucket{Idx: w.c, N: moved + n})
	}
	return next, now, moved + n
}
