package ratekit_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestRenewalsOutlastTwoFailures: an InFlight slot survives two renewals
// in a row that hang until their timeout, and the third keeps it. The store
// runs on a clock it sets itself, to the worst case: the Reserve's script
// at the call, each renewal's script at the last instant its deadline lets
// it reach the store. Every renewal after the two failed ones must find the
// slot still held, and another Limiter is refused meanwhile.
func TestRenewalsOutlastTwoFailures(t *testing.T) {
	const lease = 400 * time.Millisecond
	st := newHoleStore(2)
	limit := ratekit.InFlight(1).Lease(lease).Named("conc")
	l, err := ratekit.New(st, limit)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ratekit.New(st, limit)
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(context.Background(), "a", 1)
	if err != nil || !r.Decision.Allowed {
		t.Fatal(r, err)
	}
	defer r.Release(context.Background())
	last := st.reserved // the call of the last successful Reserve or Renew
	for i := range 4 {
		var rn renewal
		select {
		case rn = <-st.renewals:
		case <-time.After(5 * time.Second):
			t.Fatalf("renewal %d: none within 5 s", i+1)
		}
		if timeout := rn.deadline.Sub(rn.called); timeout > lease/4 {
			t.Errorf("renewal %d: timeout %v, want at most a quarter of the lease (%v)", i+1, timeout, lease/4)
		}
		if end := last.Add(lease); rn.deadline.After(end) {
			t.Errorf("renewal %d: deadline %v after the last renewal's lease ends", i+1, rn.deadline.Sub(end))
		}
		switch {
		case i < 2 && rn.err == nil:
			t.Fatalf("renewal %d: black-holed, yet it succeeded", i+1)
		case i >= 2 && (rn.err != nil || !rn.held):
			t.Fatalf("renewal %d, after two failed: held %v, %v; want the slot still held", i+1, rn.held, rn.err)
		case i >= 2:
			last = rn.called
			r2, err := other.Reserve(context.Background(), "a", 1)
			if err != nil || r2.Decision.Allowed {
				t.Fatalf("renewal %d: another Reserve was admitted (%v) while the slot was held", i+1, err)
			}
		}
	}
}

// holeStore is a memstore on its own clock whose first renewals hang until
// their deadline and fail, as on a black-holed connection. It sets its
// clock to the call for a Reserve and to its deadline for a renewal that
// gets through (and never back), and reports each renewal.
type holeStore struct {
	*memstore.Store
	holes    int64
	clock    atomic.Int64 // Unix ns
	n        atomic.Int64 // renewals so far
	reserved time.Time    // the first Reserve's call
	renewals chan renewal
}

func (s *holeStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

// renewal is one call of holeStore.Renew.
type renewal struct {
	called, deadline time.Time
	held             bool
	err              error
}

func newHoleStore(holes int64) *holeStore {
	h := &holeStore{holes: holes, renewals: make(chan renewal, 100)}
	h.Store = memstore.New(memstore.WithClock(func() time.Time { return time.Unix(0, h.clock.Load()) }))
	return h
}

// set moves the clock to at, never back.
func (h *holeStore) set(at time.Time) {
	for c := h.clock.Load(); at.UnixNano() > c && !h.clock.CompareAndSwap(c, at.UnixNano()); c = h.clock.Load() {
	}
}

func (h *holeStore) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	now := time.Now()
	if h.reserved.IsZero() {
		h.reserved = now
	}
	h.set(now)
	return storetest.Reserve(ctx, h.Store, key, limits, cost)
}

func (h *holeStore) Renew(ctx context.Context, key string, limits []ratekit.Limit, rc *ratekit.Receipt) (bool, error) {
	rn := renewal{called: time.Now()}
	rn.deadline, _ = ctx.Deadline()
	if h.n.Add(1) <= h.holes {
		<-ctx.Done()
		rn.err = ctx.Err()
	} else {
		h.set(rn.deadline.Add(-time.Microsecond)) // the latest its reply could still arrive in time
		rn.held, rn.err = storetest.Renew(ctx, h.Store, key, limits, rc)
	}
	h.renewals <- rn
	return rn.held, rn.err
}
