package memstore

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit"
)

// check decides one limit against its current state e (ok reports whether it
// exists and is live) at time nowUS, in whole microseconds like the Redis
// engine. It returns the limit's state after the call and, when charge is set
// and the limit admits the request, the entry to store. The arithmetic mirrors
// store/redisstore/lua/engine.lua line for line.
func check(l ratekit.Limit, e entry, ok bool, cost int64, charge bool, nowUS int64) (ratekit.LimitState, entry, error) {
	switch l.Algorithm() {
	case ratekit.AlgFixedWindow:
		st, n := fixedWindow(l, e, ok, cost, charge, nowUS)
		return st, n, nil
	case ratekit.AlgGCRA:
		st, n := gcra(l, e, ok, cost, charge, nowUS)
		return st, n, nil
	default:
		return ratekit.LimitState{}, entry{}, fmt.Errorf("ratekit: memstore: algorithm %q is not supported", l.Algorithm())
	}
}

func fixedWindow(l ratekit.Limit, e entry, ok bool, cost int64, charge bool, nowUS int64) (ratekit.LimitState, entry) {
	quota, windowMS := l.Burst(), l.Window().Milliseconds()
	nowMS := nowUS / 1000
	count, ttlMS, expireMS := int64(0), windowMS, nowMS+windowMS
	if ok && e.expireMS > nowMS { // at TTL 0 the engine, like PTTL, starts a new window
		count, ttlMS, expireMS = e.value, e.expireMS-nowMS, e.expireMS
	}
	st := ratekit.LimitState{Limit: l, Allowed: count+cost <= quota}
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
	return st, entry{value: after, expireMS: expireMS}
}

func gcra(l ratekit.Limit, e entry, ok bool, cost int64, charge bool, nowUS int64) (ratekit.LimitState, entry) {
	interval, burst := l.Interval().Microseconds(), l.Burst()
	offset := interval * burst
	tat := nowUS
	if ok && e.value > nowUS {
		tat = e.value
	}
	st := ratekit.LimitState{Limit: l}
	// remaining and reset as things stand, before any charge
	st.Remaining = max((nowUS-tat+offset)/interval, 0)
	st.ResetAfter = us(tat - nowUS)
	if cost > burst {
		st.Unsatisfiable = true
		return st, entry{}
	}
	newTat := tat + interval*cost
	diff := nowUS - (newTat - offset)
	if diff < 0 {
		st.RetryAfter = us(-diff)
		return st, entry{}
	}
	st.Allowed = true
	if !charge {
		return st, entry{}
	}
	st.Remaining = diff / interval
	st.ResetAfter = us(newTat - nowUS)
	ttlMS := (newTat - nowUS + 999) / 1000
	return st, entry{value: newTat, expireMS: nowUS/1000 + ttlMS}
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }
