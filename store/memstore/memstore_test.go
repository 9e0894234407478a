package memstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// newClock returns a fake clock.
func newClock() *storetest.Clock {
	return storetest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
}

// TestAllOrNothing: a denial by the tight limit charges the loose one nothing.
func TestAllOrNothing(t *testing.T) {
	s := memstore.New(memstore.WithClock(newClock().Now))
	loose := ratekit.FixedWindow(100, time.Minute).Named("loose")
	tight := ratekit.GCRA(1, time.Minute, 2).Named("tight")
	limits := []ratekit.Limit{loose, tight}
	ctx := context.Background()
	for i := range 5 {
		d, err := storetest.Take(ctx, s, "k", limits, 1)
		if err != nil || d.Allowed != (i < 2) {
			t.Fatalf("take %d: %+v %v", i, d, err)
		}
		if !d.Allowed && (d.Limit.Name() != "tight" || d.States[0].Remaining != 98) {
			t.Fatalf("take %d: binding %s, loose remaining %d; want tight, 98", i, d.Limit.Name(), d.States[0].Remaining)
		}
	}
	if d, _ := storetest.Peek(ctx, s, "k", []ratekit.Limit{loose}); d.Remaining != 98 {
		t.Fatalf("loose remaining %d after denials, want 98", d.Remaining)
	}
}

// TestSweep: expired state leaves memory once any call touches its shard.
func TestSweep(t *testing.T) {
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now))
	limits := []ratekit.Limit{ratekit.FixedWindow(5, time.Second), ratekit.GCRA(10, time.Second, 5)}
	for i := range 1000 {
		if _, err := storetest.Take(context.Background(), s, fmt.Sprint("old", i), limits, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 2000 {
		t.Fatalf("%d entries, want 2000", n)
	}
	c.Advance(2 * time.Second)
	for i := range 1000 {
		if _, err := storetest.Take(context.Background(), s, fmt.Sprint("new", i), limits, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 2000 {
		t.Fatalf("%d entries after expiry and sweep, want the 2000 new ones", n)
	}
}

func TestResetAndEmptyKey(t *testing.T) {
	s := memstore.New()
	limits := []ratekit.Limit{ratekit.FixedWindow(1, time.Hour)}
	ctx := context.Background()
	if _, err := storetest.Take(ctx, s, "", limits, 1); err == nil {
		t.Fatal("empty key accepted")
	}
	storetest.Take(ctx, s, "k", limits, 1)
	if d, _ := storetest.Take(ctx, s, "k", limits, 1); d.Allowed {
		t.Fatal("second take allowed")
	}
	if err := storetest.Reset(ctx, s, "k", limits); err != nil {
		t.Fatal(err)
	}
	if d, _ := storetest.Take(ctx, s, "k", limits, 1); !d.Allowed {
		t.Fatal("take after reset denied")
	}
}

// TestGCRAKeepsStateThroughItsLastMillisecond mirrors Redis, which keeps a
// key through the millisecond of its expiry: the engine still reads the TAT.
func TestGCRAKeepsStateThroughItsLastMillisecond(t *testing.T) {
	c := storetest.NewClock(time.Unix(1_800_000_000, 999_000)) // x.000999 s
	s := memstore.New(memstore.WithClock(c.Now))
	limits := []ratekit.Limit{ratekit.GCRA(1000, time.Second, 1)} // one per ms
	if d, _ := storetest.Take(context.Background(), s, "k", limits, 1); !d.Allowed {
		t.Fatal("first take denied")
	}
	c.Advance(time.Microsecond) // TAT is x.001999; the key expires at ms x.001, now is in ms x.001
	d, _ := storetest.Take(context.Background(), s, "k", limits, 1)
	if d.Allowed || d.RetryAfter != 999*time.Microsecond {
		t.Fatalf("second take: allowed %v, retry %v; want denied, retry 999µs", d.Allowed, d.RetryAfter)
	}
}

func TestNoLimits(t *testing.T) {
	if _, err := storetest.Take(context.Background(), memstore.New(), "k", nil, 1); err == nil {
		t.Fatal("a call without limits was accepted")
	}
}

// TestStateAndBlockEntries: a limit's state and its block are two entries
// of one subject, each expiring on its own; Reset forgets both; the count
// WithMaxEntries keeps follows every step.
func TestStateAndBlockEntries(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithMaxEntries(100), memstore.WithSweepEvery(time.Hour))
	defer s.Close()
	blocking := ratekit.FixedWindow(1, time.Second).Block(time.Minute).Named("blocking")
	other := ratekit.GCRA(10, time.Second, 5).Named("other")
	limits := []ratekit.Limit{blocking, other}
	held := func(step string, want int) {
		t.Helper()
		if counted, n := memstore.Counted(s); n != want || counted != int64(n) {
			t.Fatalf("%s: %d entries held (%d counted), want %d", step, n, counted, want)
		}
	}
	storetest.Take(ctx, s, "k", limits, 1)
	storetest.Take(ctx, s, "k", limits, 1) // denied: starts the block
	held("after the block", 3)
	c.Advance(2 * time.Second) // the window and the GCRA state expire; the block lives
	s.Sweep()
	held("after the window", 1)
	if d, _ := storetest.Take(ctx, s, "k", limits, 1); d.Allowed || !d.Blocked {
		t.Fatalf("take during the block: %+v", d)
	}
	if err := storetest.Reset(ctx, s, "k", []ratekit.Limit{blocking}); err != nil {
		t.Fatal(err)
	}
	held("after Reset", 0)
	if d, _ := storetest.Take(ctx, s, "k", limits, 1); !d.Allowed {
		t.Fatalf("take after Reset: %+v", d)
	}
	held("after a new take", 2)
	c.Advance(time.Hour)
	s.Sweep()
	held("after expiry", 0)
}
