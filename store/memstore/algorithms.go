package memstore

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// check decides one limit against its current state e (ok reports whether it
// exists and is live; e points to a zero entry when not) at time nowUS, in
// whole microseconds like the Redis engine. It writes to st the limit's
// state after the call, but for its Limit, which the caller sets, and to n,
// when charge is set and the limit admits the request, the entry to store
// (else the zero entry). The arithmetic mirrors
// store/redisengine/lua/engine.lua function for function.
func check(sp *ratekit.Spec, e *entry, ok bool, cost int64, charge bool, nowUS, draw, lease int64, st *ratekit.LimitState, n *entry) error {
	*n = entry{}
	switch a := sp.Algorithm; {
	case a == store.InFlight:
		inFlight(sp, e, ok, cost, charge, nowUS, lease, st, n)
	case a == store.FixedWindow:
		fixedWindow(sp, e, ok, cost, charge, nowUS, st, n)
	case a == store.SlidingWindow:
		slidingWindow(sp, e, ok, cost, charge, nowUS, st, n)
	case a == store.SlidingLog:
		slidingLog(sp, e, ok, cost, charge, nowUS, st, n)
	case a == store.GCRA || a == store.TokenBucket || a == store.LeakyBucket:
		gcra(sp, e, ok, cost, charge, nowUS, st, n)
	case a == store.Suppressed:
		suppressed(sp, e, ok, cost, charge, nowUS, draw, st, n)
	default:
		*st = ratekit.LimitState{}
		return fmt.Errorf("ratekit: memstore: algorithm %q is not supported", a)
	}
	return nil
}

func fixedWindow(sp *ratekit.Spec, e *entry, ok bool, cost int64, charge bool, nowUS int64, st *ratekit.LimitState, n *entry) {
	quota, windowMS := sp.Quota, sp.Window.Milliseconds()
	nowMS := nowUS / 1000
	count, ttlMS, expireMS := int64(0), windowMS, nowMS+windowMS
	if ok && e.expireMS > nowMS { // at TTL 0 the engine, like PTTL, starts a new window
		count, ttlMS, expireMS = e.value, e.expireMS-nowMS, e.expireMS
	}
	*st = ratekit.LimitState{Allowed: count+cost <= quota}
	after := count
	if st.Allowed && charge {
		after += cost
	}
	st.Remaining = max(quota-after, 0)
	if after > 0 {
		st.ResetAfter = ms(ttlMS)
	}
	if !st.Allowed {
		if cost > quota {
			st.Unsatisfiable = true
		} else {
			st.RetryAfter = ms(ttlMS)
		}
	}
	*n = entry{value: after, expireMS: expireMS}
}

// slidingWindow: see algorithms.sliding in the engine.
func slidingWindow(sp *ratekit.Spec, e *entry, ok bool, cost int64, charge bool, nowUS int64, st *ratekit.LimitState, n *entry) {
	quota, windowMS, width := sp.Quota, sp.Window.Milliseconds(), sp.Precision.Milliseconds()
	nowMS := nowUS / 1000
	c := nowMS / width
	o := c - windowMS/width
	counts := map[int64]int64{}
	newest, full := int64(-1), int64(0)
	if ok {
		for _, b := range e.buckets {
			if b.idx >= o && b.idx <= c && b.n > 0 {
				counts[b.idx] = b.n
				if b.idx > o {
					full += b.n
				}
				newest = max(newest, b.idx)
			}
		}
	}
	x := nowMS % width
	scaled := full*width + counts[o]*(width-x)
	*st = ratekit.LimitState{Remaining: max((quota*width-scaled)/width, 0)}
	if newest >= 0 {
		st.ResetAfter = ms((newest+1)*width + windowMS - nowMS)
	}
	need := (quota - cost) * width
	if scaled > 0 && !(charge && cost <= quota && scaled <= need) { // a charge reports the state after it
		st.EffectiveWindow = ms(slideWindow(counts, o, c, full, x, st.Remaining, quota, width, windowMS, nowMS))
	}
	if cost > quota {
		st.Unsatisfiable = true
		return
	}
	if scaled > need {
		st.RetryAfter = ms(slideRetry(counts, o, full, x, need, width, windowMS, nowMS))
		return
	}
	st.Allowed = true
	if !charge {
		return
	}
	ttl := (c+1)*width + windowMS - nowMS
	st.Remaining = (quota*width - scaled - cost*width) / width
	st.ResetAfter = ms(ttl)
	next := entry{expireMS: nowMS + ttl}
	for _, b := range e.buckets {
		if ok && b.idx >= o && b.idx != c {
			next.buckets = append(next.buckets, b)
		}
	}
	next.buckets = append(next.buckets, bucket{idx: c, n: counts[c] + cost})
	*n = next
	counts[c] += cost // the state after the charge, for its effective window
	st.EffectiveWindow = ms(slideWindow(counts, o, c, full+cost, x, st.Remaining, quota, width, windowMS, nowMS))
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

// slidingLog: see algorithms.log in the engine. The window is (now-window, now].
func slidingLog(sp *ratekit.Spec, e *entry, ok bool, cost int64, charge bool, nowUS int64, st *ratekit.LimitState, n *entry) {
	quota, windowUS := sp.Quota, sp.Window.Microseconds()
	from := nowUS - windowUS
	var in []int64
	if ok {
		for i, t := range e.log {
			if t > from {
				in = e.log[i:]
				break
			}
		}
	}
	count := int64(len(in))
	*st = ratekit.LimitState{Remaining: max(quota-count, 0)}
	if count > 0 {
		st.ResetAfter = us(in[count-1] + windowUS - nowUS)
		st.EffectiveWindow = us(in[0] + windowUS - nowUS) // until the oldest leaves
	}
	if count+cost > quota {
		if cost > quota {
			st.Unsatisfiable = true
		} else {
			st.RetryAfter = us(in[count+cost-quota-1] + windowUS - nowUS)
		}
		return
	}
	st.Allowed = true
	if !charge {
		return
	}
	st.Remaining -= cost
	st.ResetAfter = us(windowUS)
	if count == 0 {
		st.EffectiveWindow = us(windowUS)
	}
	next := entry{log: make([]int64, 0, count+cost), expireMS: nowUS/1000 + windowUS/1000}
	next.log = append(next.log, in...)
	for range cost {
		next.log = append(next.log, nowUS)
	}
	*n = next
}

// gcra serves GCRA, TokenBucket and LeakyBucket: see algorithms.gcra in the
// engine.
func gcra(sp *ratekit.Spec, e *entry, ok bool, cost int64, charge bool, nowUS int64, st *ratekit.LimitState, n *entry) {
	interval, burst, maxWait := sp.Interval.Microseconds(), sp.Quota, sp.MaxWait.Microseconds()
	offset := interval * burst
	tat := nowUS
	if ok && e.value > nowUS {
		tat = e.value
	}
	*st = ratekit.LimitState{}
	st.Remaining = max((nowUS-tat+offset)/interval, 0)
	st.ResetAfter = us(tat - nowUS)
	if cost > burst {
		st.Unsatisfiable = true
		return
	}
	newTat := tat + interval*cost
	diff := nowUS - (newTat - offset)
	if diff < 0 {
		st.RetryAfter = us(-diff)
		return
	}
	var delay int64
	if maxWait > 0 {
		if delay = tat - nowUS; delay > maxWait {
			st.RetryAfter = us(delay - maxWait)
			return
		}
	}
	st.Allowed = true
	if !charge {
		return
	}
	st.Remaining = diff / interval
	st.ResetAfter = us(newTat - nowUS)
	st.Delay = us(delay)
	ttlMS := (newTat - nowUS + 999) / 1000
	*n = entry{value: newTat, expireMS: nowUS/1000 + ttlMS}
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

// inFlight: see algorithms.inflight in the engine. e.log holds the leases
// as pairs: expiry µs, lease id. An admitted call takes one slot whatever
// its cost.
func inFlight(sp *ratekit.Spec, e *entry, ok bool, cost int64, charge bool, nowUS, lease int64, st *ratekit.LimitState, n *entry) {
	live := int64(0)
	if ok {
		live = liveLeases(e.log, nowUS)
	}
	*st = ratekit.LimitState{Remaining: max(sp.Quota-live, 0)}
	if (cost > 0 || charge) && live+1 > sp.Quota { // a reserve takes a slot whatever its cost
		st.RetryAfter = store.RetryInFlight
		return
	}
	st.Allowed = true
	if !charge {
		return
	}
	st.Remaining--
	expiry := nowUS + sp.Window.Microseconds()
	next := entry{log: make([]int64, 0, 2*live+2), expireMS: (expiry + 999) / 1000}
	for i := 0; ok && i < len(e.log); i += 2 {
		if e.log[i] > nowUS {
			next.log = append(next.log, e.log[i], e.log[i+1])
		}
	}
	*n = entry{log: append(next.log, expiry, lease), expireMS: next.expireMS}
}

// liveLeases counts the leases of log (pairs: expiry µs, id) alive at nowUS.
func liveLeases(log []int64, nowUS int64) int64 {
	n := int64(0)
	for i := 0; i < len(log); i += 2 {
		if log[i] > nowUS {
			n++
		}
	}
	return n
}
