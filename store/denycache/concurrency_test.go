package denycache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestConcurrentExactness: four instances, each with its own deny cache over
// one shared store, take 200 concurrent requests at a quota of 100: exactly
// 100 pass, 20 times over, for every algorithm. A second burst is denied
// throughout, and leaves every instance answering from its cache.
func TestConcurrentExactness(t *testing.T) {
	for _, l := range storetest.Algorithms(100, time.Hour) {
		t.Run(l.Name(), func(t *testing.T) {
			ms := memstore.New()
			t.Cleanup(func() { ms.Close() })
			inner := &counting{Store: ms}
			var caches [4]*denycache.Store
			for i := range caches {
				caches[i] = denycache.New(inner)
			}
			for run := range 20 {
				key := fmt.Sprint("run", run)
				if n := burst(t, caches[:], key, l, 200); n != 100 {
					t.Fatalf("run %d: %d admitted, want 100", run, n)
				}
				if n := burst(t, caches[:], key, l, 200); n != 0 {
					t.Fatalf("run %d, second burst: %d admitted, want 0", run, n)
				}
				for i, c := range caches {
					before := inner.calls()
					d, err := storetest.Take(context.Background(), c, key, []ratekit.Limit{l}, 1)
					if err != nil || d.Allowed || !d.Cached || inner.calls() != before {
						t.Fatalf("run %d, instance %d after the bursts: %+v, %v, %d store calls", run, i, d, err, inner.calls()-before)
					}
				}
			}
		})
	}
}

// burst sends n concurrent Takes of key, spread over caches, and returns
// how many were admitted.
func burst(t *testing.T, caches []*denycache.Store, key string, l ratekit.Limit, n int) int64 {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := storetest.Take(context.Background(), caches[i%len(caches)], key, []ratekit.Limit{l}, 1)
			if err != nil {
				t.Error(err)
			}
			if d.Allowed {
				admitted.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	return admitted.Load()
}

// TestConcurrentReset: Takes and Resets of one subject race (for the race
// detector); once the last Reset has returned, the subject is admitted.
func TestConcurrentReset(t *testing.T) {
	ms := memstore.New()
	t.Cleanup(func() { ms.Close() })
	c := denycache.New(ms)
	limits := []ratekit.Limit{ratekit.FixedWindow(1, time.Hour)}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				if g == 0 {
					if err := storetest.Reset(context.Background(), c, "k", limits); err != nil {
						t.Error(err)
					}
				} else if _, err := storetest.Take(context.Background(), c, "k", limits, 1); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := storetest.Reset(context.Background(), c, "k", limits); err != nil {
		t.Fatal(err)
	}
	if d, err := storetest.Take(context.Background(), c, "k", limits, 1); err != nil || !d.Allowed {
		t.Fatalf("after the last Reset: %+v, %v", d, err)
	}
}
