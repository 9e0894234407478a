package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestMemoryPerKey reports MEMORY USAGE of each algorithm's key at quota
// 100/min after 100 requests in one minute (docs/performance.md), and bounds
// it: a log at most 160 B per entry (small logs are listpacks, larger ones
// skiplists), every other algorithm under 400 B.
func TestMemoryPerKey(t *testing.T) {
	srv := redistest.RealStandalone(t) // MEMORY USAGE needs a real server
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s := newStore(t, c, redistest.Prefix(t))
	limits := append(storetest.Algorithms(100, time.Minute), ratekit.SlidingLog(1000, time.Minute).Named("log-1000"))
	for _, l := range limits {
		subject := "203.0.113.7-" + l.Name()
		for range l.Spec().Quota {
			take(t, s, subject, []ratekit.Limit{l}, 1)
		}
		keys, _ := s.Keys(subject, []ratekit.Limit{l})
		n, err := c.MemoryUsage(context.Background(), keys[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("| %s | %d B | %s |", l.Name(), n, keys[0])
		limit := int64(400)
		if l.Spec().Algorithm == "log" {
			limit = l.Spec().Quota * 160
		}
		if n <= 0 || n > limit {
			t.Errorf("%s: %d bytes, want (0, %d]", l.Name(), n, limit)
		}
	}
}
