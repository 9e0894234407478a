package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
)

// TestReserveSkewedClock reserves InFlight slots, with a 100 ms deadline
// each, on a Redis whose clock is 5 s ahead of the instance's or 5 s behind
// (miniredis, its TIME set to the real time plus the skew before each call),
// which then steps 5 s forward: every reserve is admitted and takes one
// slot. Reserves carry their deadline on Redis's clock, learnt from the
// replies; the call that meets the step is refused as late while its caller
// still waits, and is sent again without a deadline.
func TestReserveSkewedClock(t *testing.T) {
	for _, skew := range []time.Duration{5 * time.Second, -5 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			m := miniredis.RunT(t)
			c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
			t.Cleanup(func() { c.Close() })
			l, err := ratekit.New(newStore(t, c, "skew"), ratekit.InFlight(10).Lease(time.Minute).Named("conc"))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			reserve := func(step string) {
				t.Helper()
				m.SetTime(time.Now().Add(skew))
				ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				r, err := l.Reserve(ctx, "subject", 1)
				if err != nil || !r.Decision.Allowed {
					t.Fatalf("%s: %+v, %v; want admitted", step, r, err)
				}
				t.Cleanup(func() { r.Release(context.Background()) })
			}
			for range 4 {
				reserve("skewed by " + skew.String())
			}
			skew += 5 * time.Second // Redis's clock steps forward
			for range 2 {
				reserve("after a step forward")
			}
			m.SetTime(time.Now().Add(skew))
			if d, err := l.Peek(ctx, "subject"); err != nil || d.Remaining != 4 {
				t.Fatalf("after 6 reserves: %+v, %v; want 6 slots taken, 4 free", d, err)
			}
		})
	}
}
