package storetest

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
)

// runSettle runs the cases of store.Settler: settling charges and holding
// InFlight slots.
func runSettle(t *testing.T, newHarness func(t *testing.T) Harness) {
	settlable := func(t *testing.T) (Harness, ratekit.Store) {
		h := newHarness(t)
		return h, h.Store
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
	t.Run("SettleGivesBackOnlyItsOwn", func(t *testing.T) {
		// A reserves 10, B 50; A settles far above the quota (a limit holds
		// at most one quota of a call's charge), then back to 10: B's 50
		// stay charged.
		for _, l := range Algorithms(100, time.Hour) {
			t.Run(l.Name(), func(t *testing.T) {
				_, s := settlable(t)
				a := reserve(t, s, "k", 10, l)
				reserve(t, s, "k", 50, l)
				settle(t, s, "k", a, 150, l)
				if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 0 {
					t.Fatalf("A settled to 150: remaining %d, want 0", got)
				}
				settle(t, s, "k", a, 10, l)
				if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 40 {
					t.Fatalf("A settled to 150 then 10: remaining %d, want 40 (B's 50 and A's 10 charged)", got)
				}
				settle(t, s, "k", a, 0, l)
				if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 50 {
					t.Fatalf("A settled to 0: remaining %d, want 50 (B's 50 charged)", got)
				}
			})
		}
	})
	t.Run("SettleCapsEachLimitByItsOwnQuota", func(t *testing.T) {
		small, big := ratekit.SlidingWindow(2, time.Hour).Named("small"), ratekit.GCRA(10, time.Hour, 10).Named("big")
		_, s := settlable(t)
		rc := reserve(t, s, "k", 1, small, big)
		settle(t, s, "k", rc, 8, small, big)
		d := peek(t, Harness{Store: s}, "k", small, big)
		if len(d.States) != 2 || d.States[0].Remaining != 0 || d.States[1].Remaining != 2 {
			t.Fatalf("reserved 1, settled to 8: %+v; want small 0 left, big 2 left", d.States)
		}
		settle(t, s, "k", rc, 1, small, big)
		d = peek(t, Harness{Store: s}, "k", small, big)
		if len(d.States) != 2 || d.States[0].Remaining != 1 || d.States[1].Remaining != 9 {
			t.Fatalf("settled back to 1: %+v; want small 1 left, big 9 left", d.States)
		}
	})
	t.Run("EmptiedWindowIsNoWindow", func(t *testing.T) {
		// A fixed window that a refund empties is gone: Peek reports no
		// window, and the next charge starts a whole new one.
		l := ratekit.FixedWindow(10, time.Minute)
		h, s := settlable(t)
		rc := reserve(t, s, "k", 5, l)
		settle(t, s, "k", rc, 0, l)
		if d := peek(t, h, "k", l); d.Remaining != 10 || d.ResetAfter != 0 {
			t.Fatalf("after a full refund: %+v; want 10 left, no window (ResetAfter 0)", d)
		}
		if !h.Exact {
			return
		}
		h.Advance(time.Second)
		d, err := Take(context.Background(), s, "k", []ratekit.Limit{l}, 1)
		if err != nil || !d.Allowed || d.ResetAfter != time.Minute {
			t.Fatalf("a charge a second after the refund: %+v, %v; want a new window (ResetAfter 1m)", d, err)
		}
	})
	t.Run("ZeroEstimateSettlesUpward", func(t *testing.T) {
		for _, l := range Algorithms(100, time.Hour) {
			t.Run(l.Name(), func(t *testing.T) {
				_, s := settlable(t)
				rc := reserve(t, s, "k", 0, l)
				if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 100 {
					t.Fatalf("reserved 0: remaining %d, want 100", got)
				}
				settle(t, s, "k", rc, 30, l)
				if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 70 {
					t.Fatalf("reserved 0, settled to 30: remaining %d, want 70", got)
				}
				settle(t, s, "k", rc, 0, l)
				if got := peek(t, Harness{Store: s}, "k", l).Remaining; got != 100 {
					t.Fatalf("settled back to 0: remaining %d, want 100", got)
				}
			})
		}
	})
	t.Run("ZeroCostHoldsASlot", func(t *testing.T) {
		l := ratekit.InFlight(2).Named("conc")
		_, s := settlable(t)
		var held []*ratekit.Receipt
		for range 2 {
			held = append(held, reserve(t, s, "k", 0, l))
		}
		d, err := Reserve(context.Background(), s, "k", []ratekit.Limit{l}, 0)
		if err != nil || d.Allowed {
			t.Fatalf("a third Reserve of cost 0 on InFlight(2): %+v, %v; want a denial", d, err)
		}
		settle(t, s, "k", held[0], 0, l)
		if d, err := Reserve(context.Background(), s, "k", []ratekit.Limit{l}, 0); err != nil || !d.Allowed {
			t.Fatalf("after one slot was released: %+v, %v; want an admission", d, err)
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
		d, err := Reserve(context.Background(), s, "k", []ratekit.Limit{l}, 5)
		if err != nil || d.Allowed || d.RetryAfter != algo.RetryInFlight || d.Remaining != 0 || d.Receipt != nil {
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
		if d, err := Reserve(context.Background(), s, "k", []ratekit.Limit{rate, slots}, 1); err != nil || d.Allowed {
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
			if held, err := Renew(context.Background(), s, "k", []ratekit.Limit{l}, rc); err != nil || !held {
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
		if held, err := Renew(context.Background(), s, "k", []ratekit.Limit{l}, rc); err != nil || held {
			t.Fatalf("renewing a lapsed lease: %v, %v; want false", held, err)
		}
	})
}

// reserve calls Reserve, which must admit, and returns its receipt.
func reserve(t *testing.T, s ratekit.Store, key string, cost int64, limits ...ratekit.Limit) *ratekit.Receipt {
	t.Helper()
	d, err := Reserve(context.Background(), s, key, limits, cost)
	if err != nil || !d.Allowed || d.Receipt == nil {
		t.Errorf("Reserve(%q, %d): %+v, %v; want an admission with a receipt", key, cost, d, err)
		return &ratekit.Receipt{Ends: make([]int64, len(limits)), Held: make([]int64, len(limits))}
	}
	return d.Receipt
}

// settle calls Settle and fails the test on an error.
func settle(t *testing.T, s ratekit.Store, key string, rc *ratekit.Receipt, cost int64, limits ...ratekit.Limit) {
	t.Helper()
	if err := Settle(context.Background(), s, key, limits, rc, cost); err != nil {
		t.Errorf("Settle: %v", err)
	}
}
