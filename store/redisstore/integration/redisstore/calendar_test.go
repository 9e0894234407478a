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

// Redis's clock decides the period, whatever the application's: an
// instance whose clock is months off (the fake clock of miniredis is, here)
// has its first call refused unrun and sent again with the period of
// Redis's time, learns the gap, and then decides the period's calls in one
// round trip each, with exact counts. (A fake clock's jump is a gap the
// instance learns anew at the first call after it.)
func TestCalendarRedisClockDecides(t *testing.T) {
	m := miniredis.RunT(t)
	clock := redistest.NewRedisClock(time.Date(2026, 3, 8, 6, 59, 59, 0, time.UTC), m) // 01:59:59 in New York, before the clocks skip 02:00
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	var stale atomic.Int64
	c.AddHook(staleHook{&stale})
	s := newStore(t, c, "cal")
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	hourly := []ratekit.Limit{ratekit.Calendar(3, ratekit.Hour, ny)}
	for hour := range 3 {
		for i := range 4 {
			d := take(t, s, "k", hourly, 1)
			if d.Allowed != (i < 3) {
				t.Fatalf("hour %d, request %d: %+v; want exactly 3 admitted", hour, i, d)
			}
		}
		if n := stale.Load(); n != int64(hour+1) {
			t.Fatalf("hour %d: %d calls refused as stale, want %d (the first of each hour the fake clock jumped to)", hour, n, hour+1)
		}
		if hour == 0 {
			if d := take(t, s, "k", hourly, 1); d.RetryAfter != time.Second {
				t.Fatalf("01:59:59: retry after %v, want 1 s (the next hour is 03:00)", d.RetryAfter)
			}
			clock.Advance(time.Second)
		} else {
			clock.Advance(time.Hour)
		}
	}
}
