package ratekit_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
	"github.com/ratekit/ratekit/store/memstore"
)

// deadlineStore records whether its last Take had a deadline.
type deadlineStore struct {
	ratekit.Store
	deadline atomic.Bool
}

func (s *deadlineStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s *deadlineStore) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	_, ok := ctx.Deadline()
	s.deadline.Store(ok)
	return storetest.Take(ctx, s.Store, key, limits, cost)
}

// nonBlockingStore is a deadlineStore that reports whether it blocks.
type nonBlockingStore struct {
	*deadlineStore
	never bool
}

func (s nonBlockingStore) NonBlocking() bool { return s.never }

// TestNonBlockingStoreHasNoTimeout: the middleware calls a store that
// reports it never blocks without a timeout context, and bounds every other
// store's calls by WithTimeout.
func TestNonBlockingStoreHasNoTimeout(t *testing.T) {
	if nb, ok := ratekit.Store(memstore.New()).(store.NonBlocking); !ok || !nb.NonBlocking() {
		t.Fatal("memstore does not report that it never blocks")
	}
	for name, tc := range map[string]struct {
		wrap     func(*deadlineStore) ratekit.Store
		deadline bool
	}{
		"non-blocking":              {func(s *deadlineStore) ratekit.Store { return nonBlockingStore{s, true} }, false},
		"reports that it blocks":    {func(s *deadlineStore) ratekit.Store { return nonBlockingStore{s, false} }, true},
		"says nothing (e.g. Redis)": {func(s *deadlineStore) ratekit.Store { return s }, true},
	} {
		t.Run(name, func(t *testing.T) {
			inner := &deadlineStore{Store: memstore.New()}
			l, err := ratekit.New(tc.wrap(inner), ratekit.FixedWindow(10, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			r := get(t, serve(t, l, ratekit.ByIP(), ratekit.WithTimeout(time.Minute)).URL)
			if r.Status != 200 || r.Header.Get("X-Ratelimit-Remaining") != "9" {
				t.Fatalf("%d %v", r.Status, r.Header)
			}
			if got := inner.deadline.Load(); got != tc.deadline {
				t.Fatalf("the store call had a deadline: %v, want %v", got, tc.deadline)
			}
		})
	}
}
