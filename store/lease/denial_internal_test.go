package lease

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// TestDenialStaysADenial: a denial is built from what short read; units a
// refill added, or a Remaining that rose, after the check do not turn it
// into an admission (which would have spent nothing).
func TestDenialStaysADenial(t *testing.T) {
	limits := []ratekit.Limit{ratekit.FixedWindow(100, time.Minute), ratekit.FixedWindow(1000, time.Hour)}
	d := ratekit.Decision{States: []ratekit.LimitState{
		{Limit: limits[0], Remaining: 2, ResetAfter: time.Minute},
		{Limit: limits[1], Remaining: 50, ResetAfter: time.Hour},
	}}
	l := newLease(&d, 2, 0, 0, 0, 1)
	sh, short := l.short(5)
	if !short || sh.limit != 0 || sh.left != 3 || sh.units != 1 {
		t.Fatalf("short(5) = %+v, %v; want limit 0 short, 3 left of it, 1 unit", sh, short)
	}
	l.units.Add(10)
	l.rem[0].Store(40)
	got := l.denial(limits, sh, 5, 0)
	if got.Allowed || got.States[0].Allowed || got.States[0].Remaining != 3 || got.States[0].RetryAfter != time.Minute {
		t.Fatalf("denial after a refill: %+v; want limit 0 refusing, 3 left, Retry-After 1m", got)
	}
}
