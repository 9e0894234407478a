package redisstore_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/internal/redistest"
)

// staleHook counts the calls Redis refused as made for another time.
type staleHook struct{ n *atomic.Int64 }

func (h staleHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h staleHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		err := next(ctx, c)
		if err != nil && strings.HasPrefix(err.Error(), "STALE ") {
			h.n.Add(1)
		}
		return err
	}
}

func (h staleHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Redis's clock decides the period, whatever the application's. An
// instance whose clock is months off (the fake clock of miniredis is, here)
// has its first call refused unrun and sent again with the period of
// Redis's time, and learns the gap. Then, up to 1 s off Redis's clock, it
// decides every call in one round trip, across a period's end too (where
// its own clock is still in the hour before), with exact counts; a jump of
// the fake clock is a gap it learns anew.
func TestCalendarRedisClockDecides(t *testing.T) {
	m := miniredis.RunT(t)
	clock := redistest.NewRedisClock(time.Date(2026, 3, 8, 6, 59, 59, 500_000_000, time.UTC), m) // 01:59:59.5 in New York, before the clocks skip 02:00
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	var stale atomic.Int64
	c.AddHook(staleHook{&stale})
	s := newStore(t, c, "cal")
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	hourly := []ratekit.Limit{ratekit.Calendar(3, calendar.Hour, ny)}
	quota := func(when string, retry time.Duration) {
		t.Helper()
		for i := range 3 {
			if d := take(t, s, "k", hourly, 1); !d.Allowed {
				t.Fatalf("%s, request %d: %+v", when, i, d)
			}
		}
		if d := take(t, s, "k", hourly, 1); d.Allowed || d.RetryAfter != retry {
			t.Fatalf("%s, past the quota: %+v; want a denial for %v", when, d, retry)
		}
	}
	quota("01:59:59.5", 500*time.Millisecond)
	if n := stale.Load(); n != 1 {
		t.Fatalf("%d calls refused as stale, want 1 (the first)", n)
	}
	clock.Advance(800 * time.Millisecond) // 03:00:00.3 on Redis; the instance's clock is 0.8 s behind
	quota("03:00:00.3", time.Hour-300*time.Millisecond)
	if n := stale.Load(); n != 1 {
		t.Fatalf("%d calls refused as stale, want still 1 (0.8 s behind, across the hour's end)", n)
	}
	clock.Advance(time.Hour)
	quota("04:00:00.3", time.Hour-300*time.Millisecond)
	if n := stale.Load(); n != 2 {
		t.Fatalf("%d calls refused as stale, want 2 (the first after the jump of an hour)", n)
	}
}
