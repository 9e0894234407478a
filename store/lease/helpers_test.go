package lease_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// counting is a memstore that counts the Takes that reach it and the
// units they asked for, and its settling calls (Reserve, Settle, Renew).
type counting struct {
	*memstore.Store
	takes, units, settling atomic.Int64
}

func (s *counting) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (c *counting) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	c.takes.Add(1)
	c.units.Add(cost)
	return storetest.Take(ctx, c.Store, key, limits, cost)
}

func (c *counting) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	c.settling.Add(1)
	return storetest.Reserve(ctx, c.Store, key, limits, cost)
}

func (c *counting) Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error {
	c.settling.Add(1)
	return storetest.Settle(ctx, c.Store, key, limits, r, cost)
}

func (c *counting) Renew(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt) (bool, error) {
	c.settling.Add(1)
	return storetest.Renew(ctx, c.Store, key, limits, r)
}

// fixture is a lease store over a counting memstore, both on one fake
// clock at a whole second, so that the store reads no fraction of a
// millisecond and the lease needs no margin (WithMargin(0)).
type fixture struct {
	clock *storetest.Clock
	ms    *memstore.Store
	inner *counting
	ls    *lease.Store
	limit ratekit.Limit
}

func newFixture(t testing.TB, limit ratekit.Limit, opts ...lease.Option) *fixture {
	t.Helper()
	c := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	ms := memstore.New(memstore.WithClock(c.Now))
	t.Cleanup(func() { ms.Close() })
	inner := &counting{Store: ms}
	opts = append([]lease.Option{lease.WithClock(c.Now), lease.WithMargin(0)}, opts...)
	ls, err := lease.New(inner, []ratekit.Limit{limit}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{clock: c, ms: ms, inner: inner, ls: ls, limit: limit}
}

// take calls the lease store's Take and fails the test on an error.
func (f *fixture) take(t testing.TB, key string, cost int64) ratekit.Decision {
	t.Helper()
	d, err := storetest.Take(context.Background(), f.ls, key, []ratekit.Limit{f.limit}, cost)
	if err != nil {
		t.Fatalf("Take(%q, %d): %v", key, cost, err)
	}
	return d
}

// shared is the inner store's own view of key: its Peek.
func (f *fixture) shared(t testing.TB, key string) ratekit.Decision {
	t.Helper()
	d, err := storetest.Peek(context.Background(), f.ms, key, []ratekit.Limit{f.limit})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// lease makes key's instance hold a lease of MaxLease − 1 units (for a
// MaxLease up to 100): a first lease of 1 unit, spent, then 1 ms later a
// second one sized from that rate (100 per 100 ms), of which one is spent.
func (f *fixture) lease(t testing.TB, key string) {
	t.Helper()
	f.take(t, key, 1)
	f.clock.Advance(time.Millisecond)
	f.take(t, key, 1)
}

// admitted sends n Takes of cost 1 for key and counts the admitted ones.
func (f *fixture) admitted(t testing.TB, key string, n int) int {
	t.Helper()
	a := 0
	for range n {
		if f.take(t, key, 1).Allowed {
			a++
		}
	}
	return a
}
