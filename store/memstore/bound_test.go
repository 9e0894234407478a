package memstore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestLongSubjects: a digested subject keeps its own state, for limits,
// lockouts and reputations alike.
func TestLongSubjects(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.WithClock(newClock().Now))
	defer s.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(1, time.Hour)}
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "temp", Attempts: 1, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	p := reputation.DefaultPolicy()
	for _, n := range []int{64, 65, 1000} {
		a, b := longSubject(n, 1), longSubject(n, 2) // equal but for the end
		for _, k := range []string{a, b} {
			if d, err := s.Take(ctx, k, limits, 1); err != nil || !d.Allowed {
				t.Fatalf("%d bytes: first take %+v %v", n, d, err)
			}
			if d, _ := lo.Attempt(ctx, k); !d.Allowed {
				t.Fatalf("%d bytes: first attempt blocked", n)
			}
			if r, _ := s.RecordViolation(ctx, k, p); r.Violations != 1 {
				t.Fatalf("%d bytes: %d violations after the first, want 1", n, r.Violations)
			}
		}
		k := strings.Clone(a) // another string, the same subject
		if d, _ := s.Take(ctx, k, limits, 1); d.Allowed {
			t.Fatalf("%d bytes: second take allowed", n)
		}
		if d, _ := lo.Attempt(ctx, k); d.Allowed {
			t.Fatalf("%d bytes: second attempt allowed", n)
		}
		if r, _ := s.Reputation(ctx, k, p); r.Violations != 1 {
			t.Fatalf("%d bytes: %d violations, want 1", n, r.Violations)
		}
		if err := s.Reset(ctx, k, limits); err != nil {
			t.Fatal(err)
		}
		if d, _ := s.Take(ctx, a, limits, 1); !d.Allowed {
			t.Fatalf("%d bytes: take after reset denied", n)
		}
	}
}

// TestSweeperRunsWithoutTraffic: expired state leaves memory with no call
// touching the store.
func TestSweeperRunsWithoutTraffic(t *testing.T) {
	s := memstore.New(memstore.WithSweepEvery(time.Millisecond)) // the real clock
	defer s.Close()
	limits := []ratekit.Limit{ratekit.GCRA(1000, time.Second, 10)} // expires after 1 ms
	for i := range 1000 {
		if _, err := s.Take(context.Background(), strconv.Itoa(i), limits, 1); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the sweeper to drop expired state", func() bool { return s.Len() == 0 })
}

// TestSweeperFollowsAFakeClock: with WithClock the sweeper sweeps by the
// latest time the store has read; one call anywhere lets it sweep all.
func TestSweeperFollowsAFakeClock(t *testing.T) {
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithSweepEvery(time.Millisecond))
	defer s.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(5, time.Second)}
	for i := range 1000 {
		if _, err := s.Take(context.Background(), strconv.Itoa(i), limits, 1); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(2 * time.Second)
	if _, err := s.Peek(context.Background(), "any", limits); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the sweeper to drop expired state", func() bool { return s.Len() == 0 })
}

// waitFor waits, up to 10 s, until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestClose(t *testing.T) {
	if err := new(memstore.Store).Close(); err != nil { // the zero value
		t.Fatal(err)
	}
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now))
	for range 2 { // idempotent
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-memstore.SweeperDone(s):
	default:
		t.Fatal("the sweeper runs on after Close")
	}
	// The store stays usable, sweeping as calls pass or on Sweep.
	limits := []ratekit.Limit{ratekit.FixedWindow(1, time.Second)}
	if d, err := s.Take(context.Background(), "k", limits, 1); err != nil || !d.Allowed {
		t.Fatalf("take after Close: %+v %v", d, err)
	}
	c.Advance(2 * time.Second)
	s.Sweep()
	if n := s.Len(); n != 0 {
		t.Fatalf("%d entries after Sweep, want 0", n)
	}
}

// TestDroppedStoreStopsItsSweeper: a store dropped without Close does not
// leak its goroutine.
func TestDroppedStoreStopsItsSweeper(t *testing.T) {
	s := memstore.New()
	if _, err := s.Take(context.Background(), "k", []ratekit.Limit{ratekit.FixedWindow(1, time.Second)}, 1); err != nil {
		t.Fatal(err)
	}
	done := memstore.SweeperDone(s)
	s = nil
	waitFor(t, "the dropped store's sweeper to return", func() bool {
		runtime.GC()
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
}

// TestMaxEntries: at the bound a new subject is refused with ErrFull, the
// subjects already held stay limited, a denial's block is stored past the
// bound, and expired entries make room.
func TestMaxEntries(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithMaxEntries(10), memstore.WithSweepEvery(time.Hour))
	defer s.Close()
	limit := ratekit.FixedWindow(2, time.Minute).Block(time.Hour)
	other := ratekit.FixedWindow(2, time.Minute).Named("other")
	take := func(key string, l ratekit.Limit) (ratekit.Decision, error) {
		return s.Take(ctx, key, []ratekit.Limit{l}, 1)
	}
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "temp", Attempts: 5, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	p := reputation.DefaultPolicy()
	held := func(want int) {
		t.Helper()
		if counted, n := memstore.Counted(s); n != want || counted != int64(n) {
			t.Fatalf("%d entries held (%d counted), want %d", n, counted, want)
		}
	}

	short := ratekit.FixedWindow(2, 500*time.Millisecond).Named("short")
	for i := range 10 {
		l := limit
		if i == 1 {
			l = short
		}
		if d, err := take("k"+strconv.Itoa(i), l); err != nil || !d.Allowed {
			t.Fatalf("take %d: %+v %v", i, d, err)
		}
	}
	held(10)
	if _, err := take("new", limit); !errors.Is(err, memstore.ErrFull) {
		t.Fatalf("new subject on a full store: %v, want ErrFull", err)
	}
	if _, err := s.Take(ctx, "k0", []ratekit.Limit{limit, other}, 1); !errors.Is(err, memstore.ErrFull) {
		t.Fatalf("new limit on a full store: %v, want ErrFull", err)
	}
	if _, err := lo.Attempt(ctx, "new"); !errors.Is(err, memstore.ErrFull) {
		t.Fatalf("new lockout key on a full store: %v, want ErrFull", err)
	}
	if _, err := s.RecordViolation(ctx, "new", p); !errors.Is(err, memstore.ErrFull) {
		t.Fatalf("new tenant on a full store: %v, want ErrFull", err)
	}
	if d, err := s.Peek(ctx, "new", []ratekit.Limit{limit}); err != nil || !d.Allowed {
		t.Fatalf("peek on a full store: %+v %v", d, err)
	}
	if r, err := s.Reputation(ctx, "new", p); err != nil || r.Score != 1 {
		t.Fatalf("reputation read on a full store: %+v %v", r, err)
	}
	held(10)

	// k1's short count has expired, before its shard's next sweep as calls
	// pass: a new entry in that shard sweeps it at once.
	c.Advance(600 * time.Millisecond)
	if d, err := take("k1", other); err != nil || !d.Allowed {
		t.Fatalf("a new entry by an expired one of its shard: %+v %v", d, err)
	}
	held(10)

	// Subjects held stay limited; a denial starts its block past the bound.
	if d, err := take("k0", limit); err != nil || !d.Allowed {
		t.Fatalf("second take of k0: %+v %v", d, err)
	}
	for i := range 2 {
		if d, err := take("k0", limit); err != nil || d.Allowed || !d.Blocked {
			t.Fatalf("take %d of k0 past its quota: %+v %v; want blocked", i, d, err)
		}
	}
	held(11)

	c.Advance(2 * time.Minute) // the counts expire; k0's block lives on
	s.Sweep()
	held(1)
	if d, err := take("new", limit); err != nil || !d.Allowed {
		t.Fatalf("new subject after the sweep: %+v %v", d, err)
	}
	if d, _ := take("k0", limit); d.Allowed || !d.Blocked {
		t.Fatalf("k0 after the sweep: %+v, want blocked still", d)
	}
	held(2)
}

// TestMaxEntriesWakesTheSweeper: a call refused at the bound wakes the
// background sweeper to drop the expired entries of the other shards.
func TestMaxEntriesWakesTheSweeper(t *testing.T) {
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithMaxEntries(10), memstore.WithSweepEvery(time.Hour))
	defer s.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(1, time.Minute)}
	take := func(key string) error {
		_, err := s.Take(context.Background(), key, limits, 1)
		return err
	}
	used := map[int]bool{}
	for i := range 10 {
		k := "k" + strconv.Itoa(i)
		if err := take(k); err != nil {
			t.Fatal(err)
		}
		used[memstore.ShardOf(s, k)] = true
	}
	c.Advance(2 * time.Minute)
	fresh := "new" // a subject in a shard that holds nothing: nothing to sweep there
	for i := 0; used[memstore.ShardOf(s, fresh)]; i++ {
		fresh = "new" + strconv.Itoa(i)
	}
	if err := take(fresh); !errors.Is(err, memstore.ErrFull) {
		t.Fatalf("new subject in an empty shard of a full store: %v, want ErrFull", err)
	}
	waitFor(t, "the woken sweeper to make room", func() bool {
		err := take(fresh)
		if err != nil && !errors.Is(err, memstore.ErrFull) {
			t.Fatal(err)
		}
		return err == nil
	})
}

// TestMaxEntriesUnderLoad: concurrent calls of every kind keep the count of
// a bounded store exact and within the bound.
func TestMaxEntriesUnderLoad(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	const bound = 300
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithMaxEntries(bound), memstore.WithSweepEvery(time.Millisecond))
	defer s.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(3, time.Second), ratekit.SlidingWindow(5, 2*time.Second).Block(time.Second), ratekit.Suppressed(2, time.Second, 2)}
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "temp", Attempts: 2, Window: time.Second, Block: time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	p := reputation.DefaultPolicy()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 3000 {
				k := "k" + strconv.Itoa(r.IntN(400))
				var err error
				switch r.IntN(8) {
				case 0:
					err = s.Reset(ctx, k, limits)
				case 1:
					_, err = lo.Attempt(ctx, k)
				case 2:
					err = lo.Reset(ctx, k)
				case 3:
					_, err = s.RecordViolation(ctx, k, p)
				case 4:
					err = s.ResetReputation(ctx, k, p)
				case 5:
					c.Advance(10 * time.Millisecond)
				default:
					_, err = s.Take(ctx, k, limits[:1+r.IntN(len(limits))], 1)
				}
				if err != nil && !errors.Is(err, memstore.ErrFull) {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Stop the sweeper first: a sweep between reading the count and
	// counting the shards would make two snapshots of different moments.
	s.Close()
	counted, n := memstore.Counted(s)
	if counted != int64(n) || n > 2*bound {
		t.Fatalf("%d entries held, %d counted; want equal, within twice the bound", n, counted)
	}
	t.Logf("%d entries held at the end", n)
}
