package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestSettleRenewWithoutReceipt: a nil receipt is an error, never a panic.
func TestSettleRenewWithoutReceipt(t *testing.T) {
	p := storetest.MustPrepare(t, memstore.New(), ratekit.InFlight(2).Lease(time.Second)).(store.Settler)
	ctx := context.Background()
	if held, err := p.Renew(ctx, "a", nil); err == nil || held {
		t.Fatalf("Renew(nil): %v, %v; want an error", held, err)
	}
	if err := p.Settle(ctx, "a", nil, 1); err == nil {
		t.Fatal("Settle(nil): no error")
	}
}
