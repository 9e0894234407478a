package storetest

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// runSettle runs the cases of store.Settler: settling charges and holding
// InFlight slots.
func runSettle(t *testing.T, newHarness func(t *testing.T) Harness) {
	settlable := func(t *testing.T) (Harness, store.Settler) {
		h := newHarness(t)
		return h, h.Store.(store.Settler)
	}
	t.Run("SettleMovesTheCharge", func(t *testing.T) {
		for _, l := range Algorithms(100, time.Hour) {
			t.Run(l.Name(), func(t *testing.T) {
				_, s := settlable(t)
				rc := reserve(t, s, "k", 10, l)
				for _, c := range []int64{3, 12, 0, 10} {
					settle(t, s, "k", rc, c, l)
					if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 100-c {
						t.Fatalf("settled to %d: remaining %d, want %d", c, got, 100-c)
					}
					if rc.Cost != c {
						t.Fatalf("the receipt records %d, want %d", rc.Cost, c)
					}
				}
			})
		}
	})
	t.Run("SettleConcurrently", func(t *testing.T) {
		for _, l := range Algorithms(10_000, time.Hour) {
			t.Run(l.Name(), func(t *testing.T) {
				_, s := settlable(t)
				var mu sync.Mutex
				var sum int64
				var wg sync.WaitGroup
				for range 200 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rc := reserve(t, s, "k", 10, l)
						c := rand.Int64N(11)
						settle(t, s, "k", rc, c, l)
						mu.Lock()
						sum += c
						mu.Unlock()
					}()
				}
				wg.Wait()
				if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 10_000-sum {
					t.Fatalf("remaining %d after settling %d in all, want %d", got, sum, 10_000-sum)
				}
			})
		}
	})
	t.Run("RefundNeverLiftsABlock", func(t *testing.T) {
		_, s := settlable(t)
		l := ratekit.FixedWindow(2, time.Hour).Block(time.Hour)
		first := reserve(t, s, "k", 1, l)
		reserve(t, s, "k", 1, l)
		if d := take(t, Harness{Store: s}, "k", 1, l); d.Allowed || !d.Blocked {
			t.Fatalf("third call: %+v, want a block", d)
		}
		settle(t, s, "k", first, 0, l)
		if d := take(t, Harness{Store: s}, "k", 1, l); d.Allowed || !d.Blocked {
			t.Fatalf("after a refund: %+v, want the block to stand", d)
		}
	})
	t.Run("RefundLapsesWithItsWindow", func(t *testing.T) {
		h, s := settlable(t)
		l := ratekit.FixedWindow(5, 200*time.Millisecond)
		rc := reserve(t, s, "k", 3, l)
		h.Advance(300 * time.Millisecond)
		take(t, h, "k", 1, l)
		settle(t, s, "k", rc, 0, l)
		if got := peek(t, h, "k", l).Remaining; got != 4 {
			t.Fatalf("a refund into the next window: remaining %d, want 4", got)
		}
	})
	t.Run("InFlightSlots", func(t *testing.T) {
		_, s := settlable(t)
		l := ratekit.InFlight(3)
		var held []*ratekit.Receipt
		for i := range 3 {
			rc := reserve(t, s, "k", 1, l)
			if rc.Lease == "" {
				t.Fatalf("slot %d: no lease", i)
			}
			held = append(held, rc)
		}
		d, err := s.Reserve(context.Background(), "k", []ratekit.Limit{l}, 5)
		if err != nil || d.Allowed || d.RetryAfter != store.RetryInFlight || d.Remaining != 0 || d.Receipt != nil {
			t.Fatalf("a fourth request: %+v, %v; want a denial, Retry-After 1s", d, err)
		}
		settle(t, s, "k", held[1], 1, l)
		if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 1 {
			t.Fatalf("after a release: %d slots left, want 1", got)
		}
		settle(t, s, "k", held[1], 1, l) // again: nothing more
		if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 1 {
			t.Fatalf("after a second release: %d slots left, want 1", got)
		}
	})
	t.Run("InFlightAllOrNothing", func(t *testing.T) {
		_, s := settlable(t)
		rate, slots := ratekit.FixedWindow(1, time.Hour), ratekit.InFlight(5)
		reserve(t, s, "k", 1, rate, slots)
		if d, err := s.Reserve(context.Background(), "k", []ratekit.Limit{rate, slots}, 1); err != nil || d.Allowed {
			t.Fatalf("second call: %+v, %v; want a denial", d, err)
		}
		if got := peek(t, Harness{Store: s}, "k", slots).Remaining; got != 4 {
			t.Fatalf("a denied call took a slot: %d left, want 4", got)
		}
	})
	t.Run("InFlightLeaseLapsesAndRenews", func(t *testing.T) {
		h, s := settlable(t)
		l := ratekit.InFlight(1).Lease(300 * time.Millisecond)
		rc := reserve(t, s, "k", 1, l)
		for range 3 { // 600 ms in all, twice the lease, renewed every 200 ms
			h.Advance(200 * time.Millisecond)
			if held, err := s.Renew(context.Background(), "k", []ratekit.Limit{l}, rc); err != nil || !held {
				t.Fatalf("renewal: %v, %v; want the lease held", held, err)
			}
		}
		if d := peek(t, h, "k", l); d.Remaining != 0 {
			t.Fatalf("a renewed lease lapsed: %+v", d)
		}
		h.Advance(400 * time.Millisecond) // past the lease, unrenewed
		if d := peek(t, h, "k", l); d.Remaining != 1 {
			t.Fatalf("a lapsed lease still holds its slot: %+v", d)
		}
		if held, err := s.Renew(context.Background(), "k", []ratekit.Limit{l}, rc); err != nil || held {
			t.Fatalf("renewing a lapsed lease: %v, %v; want false", held, err)
		}
	})
}

// reserve calls Reserve, which must admit, and returns its receipt.
func reserve(t *testing.T, s store.Settler, key string, cost int64, limits ...ratekit.Limit) *ratekit.Receipt {
	t.Helper()
	d, err := s.Reserve(context.Background(), key, limits, cost)
	if err != nil || !d.Allowed || d.Receipt == nil {
		t.Errorf("Reserve(%q, %d): %+v, %v; want an admission with a receipt", key, cost, d, err)
		return &ratekit.Receipt{Ends: make([]int64, len(limits))}
	}
	return d.Receipt
}

// settle calls Settle and fails the test on an error.
func settle(t *testing.T, s store.Settler, key string, rc *ratekit.Receipt, cost int64, limits ...ratekit.Limit) {
	t.Helper()
	if err := s.Settle(context.Background(), key, limits, rc, cost); err != nil {
		t.Errorf("Settle: %v", err)
	}
}
