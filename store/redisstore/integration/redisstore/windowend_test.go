package redisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
)

// TestFixedWindowEndsOnTime: on a real redis-server a key lives through the
// millisecond its PTTL reads 0, and a fixed window must end then, not a
// millisecond later. FixedWindow(3, 5ms) taken back to back for 500 ms:
// no denial has a RetryAfter of 0 (a retry "at RetryAfter" would be
// refused), alone and beside a second limit.
func TestFixedWindowEndsOnTime(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s := newStore(t, c, redistest.Prefix(t))
	sets := map[string][]ratekit.Limit{
		"alone":  {ratekit.FixedWindow(3, 5*time.Millisecond)},
		"beside": {ratekit.FixedWindow(3, 5*time.Millisecond), ratekit.GCRA(1e6, time.Second, 1000).Named("wide")},
	}
	for name, limits := range sets {
		t.Run(name, func(t *testing.T) {
			calls, denied, zero := 0, 0, 0
			for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
				d, err := storetest.Take(context.Background(), s, name, limits, 1)
				if err != nil {
					t.Fatal(err)
				}
				calls++
				if !d.Allowed {
					denied++
					if d.RetryAfter <= 0 {
						zero++
					}
				}
			}
			t.Logf("%d calls, %d denied, %d with RetryAfter 0", calls, denied, zero)
			if zero != 0 {
				t.Fatalf("%d of %d denials had RetryAfter 0: a window outlived its end", zero, denied)
			}
			if denied == 0 {
				t.Fatalf("no denial in %d calls: the test did not reach a full window", calls)
			}
		})
	}
}
