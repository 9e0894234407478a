package memstore_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
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
			if d, err := storetest.Take(ctx, s, k, limits, 1); err != nil || !d.Allowed {
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
		if d, _ := storetest.Take(ctx, s, k, limits, 1); d.Allowed {
			t.Fatalf("%d bytes: second take allowed", n)
		}
		if d, _ := lo.Attempt(ctx, k); d.Allowed {
			t.Fatalf("%d bytes: second attempt allowed", n)
		}
		if r, _ := s.Reputation(ctx, k, p); r.Violations != 1 {
			t.Fatalf("%d bytes: %d violations, want 1", n, r.Violations)
		}
		if err := storetest.Reset(ctx, s, k, limits); err != nil {
			t.Fatal(err)
		}
		if d, _ := storetest.Take(ctx, s, a, limits, 1); !d.Allowed {
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
		if _, err := storetest.Take(context.Background(), s, strconv.Itoa(i), limits, 1); err != nil {
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
		if _, err := storetest.Take(context.Background(), s, strconv.Itoa(i), limits, 1); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(2 * time.Second)
	if _, err := storetest.Peek(context.Background(), s, "any", limits); err != nil {
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
	if d, err := storetest.Take(context.Background(), s, "k", limits, 1); err != nil || !d.Allowed {
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
	if _, err := storetest.Take(context.Background(), s, "k", []ratekit.Limit{ratekit.FixedWindow(1, time.Second)}, 1); err != nil {
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

// sameShard returns n keys held in the shard of key, none of them key.
func sameShard(s *memstore.Store, key string, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		if k := "k" + strconv.Itoa(i); memstore.ShardOf(s, k) == memstore.ShardOf(s, key) {
			out = append(out, k)
		}
	}
	return out
}

// TestMaxEntriesEvictsWhatAdmits: at the bound, a new subject takes the
// place of the admitting state that expires first in its shard; the
// subjects that deny, and blocks, are never evicted; a denial's block is
// stored past the bound; and the count stays exact.
func TestMaxEntriesEvictsWhatAdmits(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithMaxEntries(10), memstore.WithSweepEvery(time.Hour))
	defer s.Close()
	limit := ratekit.FixedWindow(2, time.Minute).Block(time.Hour)
	early := ratekit.FixedWindow(2, 30*time.Second).Named("early")
	held := func(want int) {
		t.Helper()
		if counted, n := memstore.Counted(s); n != want || counted != int64(n) {
			t.Fatalf("%d entries held (%d counted), want %d", n, counted, want)
		}
	}
	keys := sameShard(s, "new", 10)
	for i, k := range keys {
		l := limit
		if i == 3 {
			l = early // expires first: the one to evict
		}
		n := 2 // at the quota: a state that denies
		if i == 3 || i == 7 {
			n = 1 // admits one more
		}
		for range n {
			if d, err := storetest.Take(ctx, s, k, []ratekit.Limit{l}, 1); err != nil || !d.Allowed {
				t.Fatalf("take of %s: %+v %v", k, d, err)
			}
		}
	}
	held(10)
	if d, err := storetest.Take(ctx, s, "new", []ratekit.Limit{limit}, 1); err != nil || !d.Allowed {
		t.Fatalf("new subject on a full store: %+v %v, want admitted in an evicted state's place", d, err)
	}
	held(10)
	if d, _ := storetest.Take(ctx, s, keys[7], []ratekit.Limit{limit}, 1); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("%s: %+v, want its count kept (1 of 2 used)", keys[7], d)
	}
	// keys[3]'s state was the one evicted: it starts afresh, in the place of
	// the one state left that admits, "new"'s
	if d, _ := storetest.Take(ctx, s, keys[3], []ratekit.Limit{early}, 1); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("the evicted subject: %+v, want a fresh count", d)
	}
	if d, _ := storetest.Take(ctx, s, "new", []ratekit.Limit{limit}, 1); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("new, evicted in turn: %+v, want a fresh count", d)
	}
	for _, i := range []int{0, 1, 2, 4, 5, 6, 8, 9} {
		if d, err := storetest.Take(ctx, s, keys[i], []ratekit.Limit{limit}, 1); err != nil || d.Allowed || !d.Blocked {
			t.Fatalf("%s at its quota: %+v %v, want denied and blocked (its count never evicted)", keys[i], d, err)
		}
	}
	held(18) // 10 states, 8 blocks stored past the bound
}

// TestMaxEntriesNeverUnlimited: a store full of states that deny refuses a
// new subject with a denial, nothing charged and a Retry-After of at most a
// second, never an error that a fail-open policy would turn into "pass":
// limiting stays on, for a lockout's attempt too. Reputations get ErrFull.
func TestMaxEntriesNeverUnlimited(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithMaxEntries(10), memstore.WithSweepEvery(time.Hour))
	defer s.Close()
	limit := ratekit.FixedWindow(1, time.Minute)
	for _, k := range sameShard(s, "new", 10) {
		if d, err := storetest.Take(ctx, s, k, []ratekit.Limit{limit}, 1); err != nil || !d.Allowed {
			t.Fatal(d, err)
		}
	}
	d, err := storetest.Take(ctx, s, "new", []ratekit.Limit{limit}, 1)
	if err != nil || d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Second || d.Remaining != 0 {
		t.Fatalf("new subject on a store full of denials: %+v %v, want denied within a second, no error", d, err)
	}
	if counted, n := memstore.Counted(s); n != 10 || counted != 10 {
		t.Fatalf("%d entries (%d counted) after the refusal, want 10: nothing charged", n, counted)
	}
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "temp", Attempts: 5, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := lo.Attempt(ctx, "new"); err != nil || d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Second {
		t.Fatalf("new lockout subject on a full store: %+v %v, want refused within a second, no error", d, err)
	}
	if _, err := s.RecordViolation(ctx, "new", reputation.DefaultPolicy()); !errors.Is(err, memstore.ErrFull) {
		t.Fatalf("new tenant on a full store: %v, want ErrFull", err)
	}
	if d, err := storetest.Peek(ctx, s, "new", []ratekit.Limit{limit}); err != nil || !d.Allowed {
		t.Fatalf("peek on a full store: %+v %v", d, err)
	}
	c.Advance(2 * time.Minute) // the denials expire: room again
	if d, err := storetest.Take(ctx, s, "new", []ratekit.Limit{limit}, 1); err != nil || !d.Allowed {
		t.Fatalf("new subject once the denials expired: %+v %v", d, err)
	}
}

// TestMaxEntriesWakesTheSweeper: a call refused at the bound wakes the
// background sweeper to drop the expired entries of the other shards.
func TestMaxEntriesWakesTheSweeper(t *testing.T) {
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithMaxEntries(10), memstore.WithSweepEvery(time.Hour))
	defer s.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(1, time.Minute)}
	take := func(key string) ratekit.Decision {
		d, err := storetest.Take(context.Background(), s, key, limits, 1)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	used := map[int]bool{}
	for i := range 10 {
		k := "k" + strconv.Itoa(i)
		take(k)
		used[memstore.ShardOf(s, k)] = true
	}
	c.Advance(2 * time.Minute)
	fresh := "new" // a subject in a shard that holds nothing: nothing to sweep there
	for i := 0; used[memstore.ShardOf(s, fresh)]; i++ {
		fresh = "new" + strconv.Itoa(i)
	}
	if d := take(fresh); d.Allowed {
		t.Fatalf("new subject in an empty shard of a full store: %+v, want refused until the sweep", d)
	}
	waitFor(t, "the woken sweeper to make room", func() bool { return take(fresh).Allowed })
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
					err = storetest.Reset(ctx, s, k, limits)
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
					_, err = storetest.Take(ctx, s, k, limits[:1+r.IntN(len(limits))], 1)
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
