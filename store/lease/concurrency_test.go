package lease_test

import (
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestInstancesShareExactly runs 4 instances (lease stores) over one
// memstore, 50 times with a fresh subject, each instance sending bursts
// from 4 goroutines with uneven demand (an instance may stop while it
// holds units). Every round: the shared window admits at most 1,000; the
// units it debited are exactly those admitted plus those held; and when a
// request was refused, at least 1,000 − 3 × MaxLease were admitted.
func TestInstancesShareExactly(t *testing.T) {
	ms := memstore.New()
	defer ms.Close()
	limit := ratekit.FixedWindow(1000, time.Hour)
	limits := []ratekit.Limit{limit}
	const instances, maxLease = 4, 40
	var stores []*lease.Store
	for range instances {
		s, err := lease.New(ms, limits, lease.WithMaxLease(maxLease))
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	var heldBefore int64 // by the subjects of earlier rounds, whose windows last
	for round := range 50 {
		key := fmt.Sprint("round-", round)
		admitted, refused := burst(t, stores, key, limits, func() int { return rng.IntN(900) }) // per goroutine: 0 to 3,596 per instance
		sh, err := storetest.Peek(ctx, ms, key, limits)
		if err != nil {
			t.Fatal(err)
		}
		held := -heldBefore
		for _, s := range stores {
			held += s.Stats().Held
		}
		heldBefore += held
		debited := 1000 - sh.Remaining
		if admitted > 1000 || debited != admitted+held {
			t.Fatalf("round %d: admitted %d, held %d, debited %d: want admitted ≤ 1000 and debited = admitted + held", round, admitted, held, debited)
		}
		if refused > 0 && admitted < 1000-(instances-1)*maxLease {
			t.Fatalf("round %d: %d refused, yet only %d admitted; the bound is 1000 − 3 × %d", round, refused, admitted, maxLease)
		}
	}
}

// TestOneInstanceRefusesNothing: one instance alone asks for exactly the
// quota from 8 goroutines, 100 times with a fresh subject. Nothing else
// spends the window, so every call is admitted: a lease read while a
// refill adds units must never refuse a call the window has room for.
func TestOneInstanceRefusesNothing(t *testing.T) {
	ms := memstore.New()
	defer ms.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(1000, time.Hour)}
	s, err := lease.New(ms, limits, lease.WithMaxLease(40))
	if err != nil {
		t.Fatal(err)
	}
	for round := range 100 {
		key := fmt.Sprint("round-", round)
		var refused atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 125 {
					d, err := storetest.Take(context.Background(), s, key, limits, 1)
					if err != nil {
						t.Error(err)
						return
					}
					if !d.Allowed {
						refused.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if n := refused.Load(); n > 0 {
			t.Fatalf("round %d: %d of 1,000 calls refused by one instance alone under a quota of 1,000", round, n)
		}
	}
}

// TestTwoLimitsShareExactly: 4 instances lease two limits at once (1,000
// per hour and 600 per hour under another name) over one memstore, 20
// rounds of uneven bursts: the tighter limit admits at most 600, and each
// shared window debited exactly the units admitted plus those held.
func TestTwoLimitsShareExactly(t *testing.T) {
	ms := memstore.New()
	defer ms.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(1000, time.Hour).Named("wide"), ratekit.FixedWindow(600, time.Hour).Named("tight")}
	var stores []*lease.Store
	for range 4 {
		s, err := lease.New(ms, limits, lease.WithMaxLease(20))
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	var heldBefore int64
	for round := range 20 {
		key := fmt.Sprint("round-", round)
		admitted, _ := burst(t, stores, key, limits, func() int { return rng.IntN(400) })
		sh, err := storetest.Peek(ctx, ms, key, limits)
		if err != nil {
			t.Fatal(err)
		}
		held := -heldBefore
		for _, s := range stores {
			held += s.Stats().Held
		}
		heldBefore += held
		for i, st := range sh.States {
			if debited := limits[i].Spec().Quota - st.Remaining; admitted > 600 || debited != admitted+held {
				t.Fatalf("round %d, %s: admitted %d, held %d, debited %d: want admitted ≤ 600 and debited = admitted + held",
					round, limits[i].Name(), admitted, held, debited)
			}
		}
	}
}

// burst sends Takes of cost 1 for key through every store from 4
// goroutines each, each goroutine as many as demand says for its store,
// and counts the answers.
func burst(t *testing.T, stores []*lease.Store, key string, limits []ratekit.Limit, demand func() int) (admitted, refused int64) {
	var a, r atomic.Int64
	var wg sync.WaitGroup
	for _, s := range stores {
		n := demand()
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n {
					d, err := storetest.Take(context.Background(), s, key, limits, 1)
					switch {
					case err != nil:
						t.Error(err)
						return
					case d.Allowed:
						a.Add(1)
					default:
						r.Add(1)
					}
				}
			}()
		}
	}
	wg.Wait()
	return a.Load(), r.Load()
}
