package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/redisstore/redistest"
)

// exactLimits admit exactly 100 of a burst: refill is negligible (1 h).
func exactLimits() []ratekit.Limit {
	return []ratekit.Limit{
		ratekit.FixedWindow(100, time.Hour),
		ratekit.GCRA(100, time.Hour, 100),
		ratekit.SlidingWindow(100, time.Hour),
		ratekit.SlidingLog(100, time.Hour),
		ratekit.TokenBucket(100, time.Hour, 100),
		ratekit.LeakyBucket(100, 100, time.Hour),
		ratekit.LeakyBucket(100, 100, time.Hour).Queue(time.Hour).Named("leakyq"),
	}
}

// TestExactness sends 200 concurrent requests through 4 separate clients (4
// stores, as 4 instances of a service would) and expects exactly 100 allowed,
// 20 times over, for each algorithm, on standalone Redis and on the cluster.
func TestExactness(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		prefix := redistest.Prefix(t)
		var stores []*redisstore.Store
		for range 4 {
			c := tg.newClient()
			t.Cleanup(func() { c.Close() })
			stores = append(stores, newStore(t, c, prefix))
		}
		for _, l := range exactLimits() {
			t.Run(l.Name(), func(t *testing.T) {
				for run := range 20 {
					allowed, errs := burst(stores, fmt.Sprintf("subject-%d", run), []ratekit.Limit{l}, 200)
					if errs != 0 || allowed != 100 {
						t.Fatalf("run %d: %d allowed, %d errors; want exactly 100 allowed, 0 errors", run, allowed, errs)
					}
				}
			})
		}
	})
}

// burst sends n concurrent Takes of cost 1, round-robin over stores, released
// together, and counts the allowed ones and the errors.
func burst(stores []*redisstore.Store, key string, limits []ratekit.Limit, n int) (allowed, errs int64) {
	var a, e atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func(s *redisstore.Store) {
			defer wg.Done()
			<-start
			d, err := s.Take(context.Background(), key, limits, 1)
			switch {
			case err != nil:
				e.Add(1)
			case d.Allowed:
				a.Add(1)
			}
		}(stores[i%len(stores)])
	}
	close(start)
	wg.Wait()
	return a.Load(), e.Load()
}
