package memstore

import "github.com/ratekit/ratekit"

// suppressed mirrors algorithms.suppressed in the engine (see
// ratekit.Suppressed). When charging it returns, admitting or not, the entry
// with the call counted; decide stores it even when the call is declined,
// and counts the call as admitted in its bucket (the last) only when the
// whole call is admitted. The state describes the window after the count.
func suppressed(sp *ratekit.Spec, e *entry, ok bool, cost int64, charge bool, nowUS, draw int64, st *ratekit.LimitState, n *entry) {
	soft, hard := sp.Quota, sp.Hard
	windowMS, width := sp.Window.Milliseconds(), sp.Precision.Milliseconds()
	nowMS := nowUS / 1000
	c := nowMS / width
	o := c - windowMS/width
	x := nowMS % width
	counts := map[int64]int64{}
	var full, fullA, oldA, admittedNow int64
	oldest, newest := int64(-1), int64(-1)
	if ok {
		for _, b := range e.buckets {
			if b.idx < o || b.idx > c {
				continue
			}
			if b.idx == c {
				admittedNow = b.a
			}
			if b.n > 0 {
				counts[b.idx] = b.n
				if b.idx > o {
					full += b.n
				}
				if oldest < 0 || b.idx < oldest {
					oldest = b.idx
				}
				newest = max(newest, b.idx)
			}
			if b.a > 0 {
				if b.idx > o {
					fullA += b.a
				} else {
					oldA = b.a
				}
			}
		}
	}
	scaled := full*width + counts[o]*(width-x)
	scaledA := fullA*width + oldA*(width-x)
	cw := cost * width
	*st = ratekit.LimitState{}
	reset := func() {
		if newest >= 0 {
			st.ResetAfter = ms((newest+1)*width + windowMS - nowMS)
		}
	}
	if cost > hard {
		st.Remaining, st.Unsatisfiable = max((soft*width-scaled)/width, 0), true
		reset()
		return
	}
	st.Allowed = true
	if scaledA+cw > hard*width {
		st.Allowed, st.Suppression = false, 1
	} else if scaled+cw > soft*width {
		from := c
		if oldest >= 0 {
			from = oldest
		}
		span := min(max(nowMS-from*width, width), windowMS)
		p := float64(soft*width) * float64(span) / (float64(scaled+cw) * float64(windowMS))
		p *= float64(soft*width) * float64(span) / (float64(max(scaledA+cw, width)) * float64(windowMS))
		st.Suppression = max(0, 1-p)
		if float64(draw)/(1<<53) >= p {
			st.Allowed = false
		}
	}
	if charge {
		counts[c] += cost
		full, scaled, newest = full+cost, scaled+cw, c
	}
	st.Remaining = max((soft*width-scaled)/width, 0)
	reset()
	if !st.Allowed {
		if cost > soft {
			st.RetryAfter = st.ResetAfter
		} else {
			st.RetryAfter = ms(slideRetry(counts, o, full, x, (soft-cost)*width, width, windowMS, nowMS))
		}
	}
	if !charge {
		return
	}
	ttl := (c+1)*width + windowMS - nowMS
	next := entry{expireMS: nowMS + ttl, buckets: make([]bucket, 0, len(e.buckets)+1)}
	for _, b := range e.buckets {
		if ok && b.idx >= o && b.idx != c {
			next.buckets = append(next.buckets, b)
		}
	}
	next.buckets = append(next.buckets, bucket{idx: c, n: counts[c], a: admittedNow})
	*n = next
}
