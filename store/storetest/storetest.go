// Package storetest is the conformance suite of ratekit stores, in the spirit
// of testing/fstest: a store passes when Run passes. ratekit runs it on
// memstore with a fake clock, on redisstore over miniredis with a fake clock,
// and on redisstore over a real redis-server and a real Redis Cluster with
// short real windows.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// Harness is one store under test.
type Harness struct {
	// Store is the store, empty (or under a fresh key prefix).
	Store ratekit.Store
	// Advance moves the store's time forward by d: a fake clock's step, or a
	// real wait for a store on the real clock.
	Advance func(d time.Duration)
	// Exact reports a fake clock: the suite then asserts timing to the
	// microsecond (Retry-After passes at exactly its value, not 1 ms before).
	Exact bool
	// Draw, when set, is the store's source of uniform draws (see
	// memstore.WithRandom, redisstore.WithRandom); the suite then runs its
	// cases on Suppressed limits too, setting the draws it needs. A store
	// without Suppressed support leaves it nil.
	Draw *Draw
	// Twin, when set, returns another store value on the same data as
	// Store (for Redis: a store of its own, on another client, under the
	// same prefix), as a second instance of a service would have. The
	// cases about two instances (RunOverrides) use it; without it they
	// build both Limiters on Store.
	Twin func() ratekit.Store
}

// Algorithms returns one limit of each algorithm with quota (or burst,
// capacity) q over window w.
func Algorithms(q int64, w time.Duration) []ratekit.Limit {
	return []ratekit.Limit{
		ratekit.FixedWindow(q, w),
		ratekit.SlidingWindow(q, w),
		ratekit.SlidingWindow(q, w).Precision(w).Named("sliding2"),
		ratekit.SlidingLog(q, w),
		ratekit.GCRA(float64(q), w, q),
		ratekit.TokenBucket(float64(q), w, q),
		ratekit.LeakyBucket(q, float64(q), w),
		ratekit.LeakyBucket(q, float64(q), w).Queue(w).Named("leakyq"),
	}
}

// Run runs the suite; newHarness returns a fresh harness for each case.
// Cases that assert timing to the microsecond run only when the harness has
// a fake clock (Exact).
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	cases := []struct {
		name  string
		exact bool // needs a fake clock
		f     func(t *testing.T, h Harness, l ratekit.Limit)
	}{
		{"CountsDown", false, countsDown},
		{"LongSubjectsApart", false, longSubjects},
		{"Exactness", false, exactness},
		{"Unsatisfiable", false, unsatisfiable},
		{"PeekAndCostZeroChargeNothing", false, peekAndCostZero},
		{"AllOrNothing", false, allOrNothing},
		{"Reset", false, reset},
		{"NewNumbers", false, newParameters},
		{"RefillsInRealTime", false, refills},
		{"RetryAfterIsExact", true, retryAfterExact},
		{"BlockOutlastsWindow", true, blockOutlastsWindow},
		{"BlockShorterThanCounters", true, blockShorterThanCounters},
	}
	fake := newHarness(t).Exact // cases that time to the microsecond need a fake clock
	for _, c := range cases {
		if c.exact && !fake {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			for _, l := range Algorithms(5, time.Hour) {
				t.Run(l.Name(), func(t *testing.T) { c.f(t, newHarness(t), l) })
			}
		})
	}
	t.Run("Carry", func(t *testing.T) { runCarry(t, newHarness) })
	if fake {
		t.Run("QueueDelays", func(t *testing.T) { queueDelays(t, newHarness(t)) })
		t.Run("EffectiveWindow", func(t *testing.T) {
			for _, l := range Algorithms(5, time.Hour) {
				if exactWindow(l) {
					t.Run(l.Name(), func(t *testing.T) { effectiveWindow(t, newHarness(t), l) })
				}
			}
		})
	}
	if newHarness(t).Draw != nil {
		runSuppressed(t, newHarness, fake)
	}
	if Settles(newHarness(t).Store, Algorithms(1, time.Hour)[0]) {
		runSettle(t, newHarness)
	}
	t.Run("EmptyKey", func(t *testing.T) {
		h := newHarness(t)
		if _, err := Take(context.Background(), h.Store, "", Algorithms(1, time.Hour)[:1], 1); err == nil {
			t.Fatal("empty key accepted")
		}
	})
}

// take calls Take and fails the test on an error.
func take(t *testing.T, h Harness, key string, cost int64, limits ...ratekit.Limit) ratekit.Decision {
	t.Helper()
	d, err := Take(context.Background(), h.Store, key, limits, cost)
	if err != nil {
		t.Fatalf("Take(%q, %d): %v", key, cost, err)
	}
	if d.RetryAfter < 0 || d.ResetAfter < 0 || d.Remaining < 0 || d.Delay < 0 {
		t.Fatalf("negative figure in %+v", d)
	}
	return d
}

func peek(t *testing.T, h Harness, key string, limits ...ratekit.Limit) ratekit.Decision {
	t.Helper()
	d, err := Peek(context.Background(), h.Store, key, limits)
	if err != nil {
		t.Fatalf("Peek(%q): %v", key, err)
	}
	return d
}

// fill takes cost 1 until l denies, and returns the denial.
func fill(t *testing.T, h Harness, key string, l ratekit.Limit) ratekit.Decision {
	t.Helper()
	for range l.Spec().Quota {
		if d := take(t, h, key, 1, l); !d.Allowed {
			t.Fatalf("denied before the quota was used: %+v", d)
		}
	}
	d := take(t, h, key, 1, l)
	if d.Allowed {
		t.Fatalf("allowed past the quota: %+v", d)
	}
	return d
}
