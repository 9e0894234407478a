package storetest

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// The draws the suite sets: Always admits every call in a Suppressed limit's
// probabilistic range, Never declines every one (p is always below 1).
const (
	Always = 0.0
	Never  = 1 - 0x1p-53
)

// Draw is a settable source of uniform draws for a store under test: give
// its Float64 method to the store (memstore.WithRandom,
// redisstore.WithRandom) and set the harness's Draw field. It yields Never
// until set. It is safe for concurrent use.
type Draw struct{ bits atomic.Uint64 }

// NewDraw returns a Draw yielding Never.
func NewDraw() *Draw {
	d := &Draw{}
	d.Set(Never)
	return d
}

// Set makes every following draw u.
func (d *Draw) Set(u float64) { d.bits.Store(math.Float64bits(u)) }

// Float64 returns the current draw.
func (d *Draw) Float64() float64 { return math.Float64frombits(d.bits.Load()) }

// runSuppressed runs the cases that apply to a Suppressed limit with draws
// set to Never, so that it admits exactly the calls that fit under its soft
// limit (factor 1: hard = soft), and then its own cases. RetryAfterIsExact
// does not apply: a retry 1 ms early is itself counted and pushes the next
// chance back, by design.
func runSuppressed(t *testing.T, newHarness func(t *testing.T) Harness, fake bool) {
	cases := []struct {
		name  string
		exact bool
		f     func(t *testing.T, h Harness, l ratekit.Limit)
	}{
		{"CountsDown", false, countsDown},
		{"Exactness", false, exactness},
		{"Unsatisfiable", false, unsatisfiable},
		{"PeekAndCostZeroChargeNothing", false, peekAndCostZero},
		{"AllOrNothing", false, allOrNothing},
		{"Reset", false, reset},
		{"NewNumbers", false, newParameters},
		{"RefillsInRealTime", false, refills},
		{"BlockOutlastsWindow", true, blockOutlastsWindow},
	}
	t.Run("Suppressed", func(t *testing.T) {
		for _, c := range cases {
			if c.exact && !fake {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				h := newHarness(t)
				h.Draw.Set(Never)
				c.f(t, h, ratekit.Suppressed(5, time.Hour, 1))
			})
		}
		t.Run("CountsEveryCall", func(t *testing.T) { suppressedCounts(t, newHarness(t)) })
		t.Run("DeclinedByAnotherLimitIsCounted", func(t *testing.T) { suppressedOtherLimit(t, newHarness(t)) })
	})
}

// suppressedCounts: soft 5, hard 10. Declined calls count (the suppression
// factor grows with each), admitted calls stop at the hard limit whatever
// the draws, and a cost above the hard limit is neither admitted nor counted.
func suppressedCounts(t *testing.T, h Harness) {
	l := ratekit.Suppressed(5, time.Hour, 2)
	h.Draw.Set(Never)
	for i := range 5 {
		if d := take(t, h, "k", 1, l); !d.Allowed || d.Suppression != 0 || d.Remaining != int64(4-i) {
			t.Fatalf("call %d under the soft limit: %+v", i, d)
		}
	}
	last := 0.0
	for i := range 3 {
		d := take(t, h, "k", 1, l)
		if d.Allowed || !(d.Suppression > last && d.Suppression < 1) || d.RetryAfter <= 0 || d.Unsatisfiable || d.Blocked {
			t.Fatalf("declined call %d: %+v, want declined with a suppression factor in (%v, 1)", i, d, last)
		}
		last = d.Suppression
	}
	h.Draw.Set(Always)
	for i := range 5 {
		if d := take(t, h, "k", 1, l); !d.Allowed || !(d.Suppression > 0 && d.Suppression < 1) {
			t.Fatalf("call %d between the limits, draw 0: %+v, want admitted with a factor in (0, 1)", i, d)
		}
	}
	for i := range 3 {
		if d := take(t, h, "k", 1, l); d.Allowed || d.Suppression != 1 || d.RetryAfter <= 0 {
			t.Fatalf("call %d past the hard limit (10 admitted), draw 0: %+v, want declined with factor 1", i, d)
		}
	}
	if d := take(t, h, "fresh", 11, l); d.Allowed || !d.Unsatisfiable || d.RetryAfter != 0 {
		t.Fatalf("cost 11 above the hard limit: %+v, want unsatisfiable", d)
	}
	h.Draw.Set(Never)
	if d := take(t, h, "fresh", 5, l); !d.Allowed || d.Suppression != 0 {
		t.Fatalf("cost 5 after an unsatisfiable call: %+v; the unsatisfiable call must not count", d)
	}
}

// suppressedOtherLimit: a call denied by another limit of the same call is
// still counted by the Suppressed limit, as declined.
func suppressedOtherLimit(t *testing.T, h Harness) {
	h.Draw.Set(Never)
	l := ratekit.Suppressed(5, time.Hour, 1)
	tight := ratekit.FixedWindow(1, time.Hour).Named("tight")
	if d := take(t, h, "k", 1, l, tight); !d.Allowed {
		t.Fatalf("first call: %+v", d)
	}
	if d := take(t, h, "k", 1, l, tight); d.Allowed || d.Limit.Name() != "tight" || !d.States[0].Allowed {
		t.Fatalf("second call: %+v, want denied by tight alone", d)
	}
	for i := range 3 { // 2 counted so far: 3 more fit under 5
		if d := take(t, h, "k", 1, l); !d.Allowed {
			t.Fatalf("call %d alone: %+v", i, d)
		}
	}
	if d := take(t, h, "k", 1, l); d.Allowed {
		t.Fatalf("6th call: %+v, want declined: the call denied by tight counts", d)
	}
	// 4 admitted, 2 declined: under the hard limit (5), above the soft one
	if p := peek(t, h, "k", l); p.Allowed || p.Remaining != 0 || !(p.Suppression > 0 && p.Suppression < 1) {
		t.Fatalf("peek after 4 admitted and 2 declined calls: %+v, want suppressed, not past the hard limit", p)
	}
}
