package lockout_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestGrowingDelays: 5 attempts pass at once, then each waits twice as
// long as the one before, from 1 s to the 15-minute cap; every Retry-After
// is exact: refused 1 ms before it, passing at it.
func TestGrowingDelays(t *testing.T) {
	ws, err := lockout.GrowingDelays(5, time.Second, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 11 || ws[0].Attempts != 5 || ws[0].Window != time.Second || ws[9].Window != 512*time.Second ||
		ws[10].Attempts != 15 || ws[10].Window != 15*time.Minute || ws[10].Block != 0 {
		t.Fatalf("windows: %+v", ws)
	}
	clock := start()
	lo, err := lockout.New(memstore.New(memstore.WithClock(clock.Now)), lockout.Config{Name: "login", Windows: ws})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 5 {
		if d, err := lo.Attempt(ctx, "alice"); err != nil || !d.Allowed {
			t.Fatalf("free attempt %d: %+v %v", i+1, d, err)
		}
	}
	var waits []time.Duration
	for len(waits) < 11 {
		d, err := lo.Attempt(ctx, "alice")
		if err != nil || d.Allowed {
			t.Fatalf("after %d waits: %+v %v, want refused", len(waits), d, err)
		}
		clock.Advance(d.RetryAfter - time.Millisecond)
		if d, _ := lo.Attempt(ctx, "alice"); d.Allowed {
			t.Fatalf("1 ms before the Retry-After %s: allowed", d.RetryAfter)
		}
		clock.Advance(time.Millisecond)
		if d, err := lo.Attempt(ctx, "alice"); err != nil || !d.Allowed {
			t.Fatalf("at the Retry-After: %+v %v", d, err)
		}
		waits = append(waits, d.RetryAfter)
	}
	want := []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second, 388 * time.Second}
	for i, w := range want {
		if waits[i] != w {
			t.Fatalf("waits %v, want %v first", waits, want)
		}
	}
	// 15 minutes after the first attempts, the 5 free ones leave the last
	// window: 15 attempts in any 15 minutes is the pace from then on.
	if d, _ := lo.Check(ctx, "alice"); !d.Allowed || d.Counts[10] != 11 {
		t.Fatalf("at 15 min: %+v", d)
	}
}

// TestGrowingDelaysRefused: values that cannot make windows are errors
// naming GrowingDelays and the fix.
func TestGrowingDelaysRefused(t *testing.T) {
	for _, c := range []struct {
		free       int64
		first, max time.Duration
		want       string
	}{
		{0, time.Second, time.Minute, "free must be 1 to 1000"},
		{1001, time.Second, time.Minute, "free must be 1 to 1000"},
		{5, 0, time.Minute, "first must be whole milliseconds, at least 1ms"},
		{5, 1500 * time.Microsecond, time.Minute, "first must be whole milliseconds"},
		{5, time.Minute, time.Second, "max must be whole milliseconds, longer than first"},
		{5, time.Minute, time.Minute, "longer than first"},
		{5, time.Second, 9000 * time.Hour, "at most 8784h0m0s"},
	} {
		ws, err := lockout.GrowingDelays(c.free, c.first, c.max)
		if err == nil || ws != nil || !strings.Contains(err.Error(), "ratekit: GrowingDelays(") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("GrowingDelays(%d, %s, %s): %v, want %q", c.free, c.first, c.max, err, c.want)
		}
	}
	ws, err := lockout.GrowingDelays(1000, time.Millisecond, 8784*time.Hour) // the largest: 36 windows, all valid
	if err != nil || len(ws) != 36 {
		t.Fatalf("the largest: %d windows, %v", len(ws), err)
	}
	if _, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Windows: ws}); err != nil {
		t.Fatalf("New with the largest: %v", err)
	}
}
