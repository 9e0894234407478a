package denycache_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// counting is a store that counts the calls that reach it.
type counting struct {
	ratekit.Store
	takes, peeks, resets atomic.Int64
}

func (s *counting) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (c *counting) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	c.takes.Add(1)
	return storetest.Take(ctx, c.Store, key, limits, cost)
}

func (c *counting) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	c.peeks.Add(1)
	return storetest.Peek(ctx, c.Store, key, limits)
}

func (c *counting) Reset(ctx context.Context, key string, limits []ratekit.Limit) error {
	c.resets.Add(1)
	return storetest.Reset(ctx, c.Store, key, limits)
}

// calls returns the Takes and Peeks that reached the store.
func (c *counting) calls() int64 { return c.takes.Load() + c.peeks.Load() }

// fixture is a deny cache over a counting memstore, both on one fake clock
// at a whole second, so that the store reads no fraction of a millisecond
// and the cache needs no margin (WithMargin(0)) unless opts set one.
type fixture struct {
	clock *storetest.Clock
	inner *counting
	cache *denycache.Store
}

func newFixture(t testing.TB, opts ...denycache.Option) *fixture {
	t.Helper()
	c := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	ms := memstore.New(memstore.WithClock(c.Now))
	t.Cleanup(func() { ms.Close() })
	inner := &counting{Store: ms}
	opts = append([]denycache.Option{denycache.WithClock(c.Now), denycache.WithMargin(0)}, opts...)
	return &fixture{clock: c, inner: inner, cache: denycache.New(inner, opts...)}
}

// take calls the cache's Take and fails the test on an error.
func (f *fixture) take(t testing.TB, key string, cost int64, limits ...ratekit.Limit) ratekit.Decision {
	t.Helper()
	d, err := storetest.Take(context.Background(), f.cache, key, limits, cost)
	if err != nil {
		t.Fatalf("Take(%q, %d): %v", key, cost, err)
	}
	return d
}

// deny takes cost 1 until the limits deny, through the cache, and returns
// the store's denial (which the cache then holds).
func (f *fixture) deny(t *testing.T, key string, limits ...ratekit.Limit) ratekit.Decision {
	t.Helper()
	for range 1000 {
		if d := f.take(t, key, 1, limits...); !d.Allowed {
			if d.Cached {
				t.Fatalf("first denial answered by the cache: %+v", d)
			}
			return d
		}
	}
	t.Fatal("no denial after 1000 requests")
	return ratekit.Decision{}
}

// cached asserts a cached denial that asked nothing of the store.
func (f *fixture) cached(t *testing.T, key string, cost int64, limits ...ratekit.Limit) ratekit.Decision {
	t.Helper()
	before := f.inner.calls()
	d := f.take(t, key, cost, limits...)
	if d.Allowed || !d.Cached || f.inner.calls() != before {
		t.Fatalf("want a cached denial and no store call; got %+v, %d store calls", d, f.inner.calls()-before)
	}
	return d
}

// asked asserts that the store was asked once, and returns its answer.
func (f *fixture) asked(t *testing.T, key string, cost int64, limits ...ratekit.Limit) ratekit.Decision {
	t.Helper()
	before := f.inner.calls()
	d := f.take(t, key, cost, limits...)
	if d.Cached || f.inner.calls() != before+1 {
		t.Fatalf("want the store's answer (1 call); got %+v, %d store calls", d, f.inner.calls()-before)
	}
	return d
}
