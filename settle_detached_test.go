package ratekit_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// ctxStore is memstore, but its Settle fails on an ended context, as a
// store across a network does.
type ctxStore struct{ *memstore.Store }

func (s *ctxStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s *ctxStore) Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return storetest.Settle(ctx, s.Store, key, limits, r, cost)
}

// TestSettleAfterClientLeft: a handler settles with the request's context
// after the client went away (the context is cancelled, or its deadline
// passed): the real cost is settled all the same, and the slot released.
func TestSettleAfterClientLeft(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for name, ctx := range map[string]context.Context{"cancelled": cancelled, "deadline passed": expired} {
		ms := memstore.New()
		t.Cleanup(func() { ms.Close() })
		l, err := ratekit.New(&ctxStore{ms}, ratekit.FixedWindow(100, time.Hour).Named("tokens"), ratekit.InFlight(1).Named("conc"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := l.Reserve(context.Background(), "a", 10)
		if err != nil || !r.Decision.Allowed {
			t.Fatalf("Reserve: %+v, %v", r, err)
		}
		if err := r.Settle(ctx, 3); err != nil {
			t.Fatalf("%s: Settle: %v", name, err)
		}
		d, err := l.Peek(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		left := map[string]int64{}
		for _, s := range d.States {
			left[s.Limit.Name()] = s.Remaining
		}
		if left["tokens"] != 97 || left["conc"] != 1 {
			t.Fatalf("%s: after Settle(3): %v left, want tokens 97 and the slot free", name, left)
		}
	}
}
