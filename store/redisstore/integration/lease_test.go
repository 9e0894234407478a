package integration_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// leaseInstances returns n lease stores, each over its own client and
// redisstore under prefix, as n instances of a service would run.
func leaseInstances(t *testing.T, n int, newClient func() redis.UniversalClient, prefix string, limits []ratekit.Limit, opts ...lease.Option) []*lease.Store {
	t.Helper()
	var stores []*lease.Store
	for range n {
		stores = append(stores, leaseStore(t, newClient(), prefix, limits, opts...))
	}
	return stores
}

// leaseStore is one instance's lease store over client; it closes the
// client when the test ends.
func leaseStore(t testing.TB, c redis.UniversalClient, prefix string, limits []ratekit.Limit, opts ...lease.Option) *lease.Store {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	rs, err := redisstore.New(c, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	s, err := lease.New(rs, limits, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tally is what a burst got.
type tally struct{ admitted, refused, errs atomic.Int64 }

// hammer sends Takes of cost 1 for key through s from 4 goroutines, each
// until it has sent demand (demand < 0: until it is refused), and adds up
// the answers.
func hammer(s ratekit.Store, key string, limits []ratekit.Limit, demand int, tl *tally, wg *sync.WaitGroup) {
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; demand < 0 || i < demand; i++ {
				d, err := storetest.Take(context.Background(), s, key, limits, 1)
				switch {
				case err != nil:
					tl.errs.Add(1)
					return
				case d.Allowed:
					tl.admitted.Add(1)
				default:
					tl.refused.Add(1)
					if demand < 0 {
						return
					}
				}
			}
		}()
	}
}

// sharedWindow reads the shared window of key through a plain redisstore:
// how many units it debited, and the time to its end.
func sharedWindow(t *testing.T, rs *redisstore.Store, key string, limit ratekit.Limit) (debited int64, left time.Duration) {
	t.Helper()
	d, err := storetest.Peek(context.Background(), rs, key, []ratekit.Limit{limit})
	if err != nil {
		t.Fatal(err)
	}
	return limit.Spec().Quota - d.Remaining, d.ResetAfter
}

// TestLeaseWindows runs 4 instances, each with its own client and lease
// store, against one limit of 1,000 per 1 s window, on standalone Redis
// and on the cluster. In each of 4 windows every instance sends bursts
// from 4 goroutines with uneven demand (an instance may stop while it
// holds units, and its units lapse with the window). In every window:
// at most 1,000 admitted; the units Redis debited are exactly those
// admitted plus those the instances hold (none spent from an earlier
// window); and, whenever a request was refused, at least 1,000 − 3 ×
// MaxLease admitted.
func TestLeaseWindows(t *testing.T) {
	const quota, maxLease, window = 1000, 50, time.Second
	limit := ratekit.FixedWindow(quota, window).Named("global")
	limits := []ratekit.Limit{limit}
	targets := []struct {
		name   string
		client func(t *testing.T) func() redis.UniversalClient
	}{
		{"standalone", func(t *testing.T) func() redis.UniversalClient {
			s := redistest.Standalone(t)
			return func() redis.UniversalClient { return s.NewClient(nil) }
		}},
		{"cluster", func(t *testing.T) func() redis.UniversalClient {
			c := redistest.StartCluster(t)
			return func() redis.UniversalClient { return c.NewClient(nil) }
		}},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			newClient := tg.client(t)
			prefix := redistest.Prefix(t)
			stores := leaseInstances(t, 4, newClient, prefix, limits, lease.WithMaxLease(maxLease))
			admin := newClient()
			t.Cleanup(func() { admin.Close() })
			rs, err := redisstore.New(admin, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			var underAdmitted int
			for w := range 4 {
				var tl tally
				var wg sync.WaitGroup
				start := time.Now()
				for _, s := range stores {
					hammer(s, "all", limits, rng.IntN(500), &tl, &wg) // 0 to 1,996 per instance
				}
				wg.Wait()
				took := time.Since(start)
				if took > window/2 {
					t.Fatalf("window %d: the bursts took %s, too long to lie in one window of %s", w, took, window)
				}
				var held int64
				for _, s := range stores {
					held += s.Stats().Held
				}
				debited, left := sharedWindow(t, rs, "all", limit)
				a := tl.admitted.Load()
				if tl.errs.Load() > 0 || a > quota || debited != a+held {
					t.Fatalf("window %d: admitted %d, held %d, debited %d, %d errors; want admitted ≤ %d, debited = admitted + held, no error",
						w, a, held, debited, tl.errs.Load(), quota)
				}
				if tl.refused.Load() > 0 && a < quota-3*maxLease {
					t.Fatalf("window %d: %d refused, yet only %d admitted; the bound is %d − 3 × %d", w, tl.refused.Load(), a, quota, maxLease)
				}
				if a < quota && tl.refused.Load() > 0 {
					underAdmitted++
				}
				t.Logf("window %d: admitted %d, refused %d, held at the end %d, in %s", w, a, tl.refused.Load(), held, took.Round(time.Millisecond))
				time.Sleep(left + 5*time.Millisecond) // the window's end: the next burst starts a new one
			}
			var st lease.Stats
			for _, s := range stores {
				x := s.Stats()
				st.Leases, st.Taken, st.Lapsed, st.Held = st.Leases+x.Leases, st.Taken+x.Taken, st.Lapsed+x.Lapsed, st.Held+x.Held
			}
			t.Logf("%d leases for %d units, %d lapsed; %d windows under-admitted", st.Leases, st.Taken, st.Lapsed, underAdmitted)
		})
	}
}

// TestLeaseConformance: the store suite over real Redis behind a lease
// store whose leased limit is the suite's fixed window.
func TestLeaseConformance(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		rs, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
		if err != nil {
			t.Fatal(err)
		}
		s, err := lease.New(rs, storetest.Algorithms(5, time.Hour)[:1], lease.WithMaxLease(5))
		if err != nil {
			t.Fatal(err)
		}
		return storetest.Harness{Store: s, Advance: redistest.Sleep}
	})
}
