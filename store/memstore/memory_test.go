package memstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/memstore"
)

// heapAlloc returns the live heap after a full collection.
func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// longSubject returns a subject of n bytes that differs from the others of
// its length only at its end.
func longSubject(n, i int) string {
	tail := "#" + strconv.Itoa(i)
	return strings.Repeat("k", n-len(tail)) + tail
}

const mib = 1 << 20

// TestLongSubjectsCostNoMemory: 200 subjects of 1 MiB, each with a limit, a
// lockout and a reputation, cost less than 1 MiB of heap in all: the store
// keeps a 32-byte digest of each, not the subject.
func TestLongSubjectsCostNoMemory(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(10, time.Hour)}
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "temp", Attempts: 5, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	p := reputation.DefaultPolicy()
	call := func(k string) {
		t.Helper()
		if _, err := storetest.Take(ctx, s, k, limits, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := lo.Attempt(ctx, k); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordViolation(ctx, k, p); err != nil {
			t.Fatal(err)
		}
	}
	call(longSubject(mib, -1)) // warm up
	before := heapAlloc()
	for i := range 200 {
		call(longSubject(mib, i))
	}
	after := heapAlloc()
	t.Logf("heap before %d B, after 200 subjects of 1 MiB %d B: %+d B", before, after, after-before)
	if n := s.Len(); n != 3*201 {
		t.Fatalf("%d entries, want %d: long subjects share state", n, 3*201)
	}
	if after-before >= mib {
		t.Fatalf("200 subjects of 1 MiB cost %d B of heap, want < 1 MiB", after-before)
	}
}

// TestBurstGivesMemoryBack: after a burst of 100k subjects has expired and
// been swept, the heap is back within 10% of where it started: the shard
// maps, which Go never shrinks, have been rebuilt.
func TestBurstGivesMemoryBack(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now), memstore.WithSweepEvery(time.Hour), memstore.WithMaxEntries(0)) // Sweep below, not the sweeper
	defer s.Close()
	limits := []ratekit.Limit{ratekit.FixedWindow(10, time.Second), ratekit.GCRA(10, time.Second, 5)}
	p := reputation.DefaultPolicy()
	burst := func(name string, n int) {
		for i := range n {
			k := name + strconv.Itoa(i)
			if _, err := storetest.Take(ctx, s, k, limits, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RecordGood(ctx, k, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	burst("warm:", 1)
	c.Advance(time.Hour)
	s.Sweep()
	before := heapAlloc()
	burst("burst:", 100_000)
	peak := heapAlloc()
	if n := s.Len(); n != 3*100_000 {
		t.Fatalf("%d entries after the burst, want %d", n, 3*100_000)
	}
	c.Advance(time.Hour) // the reputations live 30 minutes, the limits 1 s
	s.Sweep()
	after := heapAlloc()
	t.Logf("heap before %d B, after the burst %d B (%+d), after expiry %d B (%+d, %+.1f%%)",
		before, peak, peak-before, after, after-before, 100*float64(after-before)/float64(before))
	if n := s.Len(); n != 0 {
		t.Fatalf("%d entries after expiry, want 0", n)
	}
	if float64(after) > 1.1*float64(before) {
		t.Fatalf("heap %d B after the burst expired, want within 10%% of %d B", after, before)
	}
	burst("again:", 10) // the store works on after compaction
	if n := s.Len(); n != 30 {
		t.Fatalf("%d entries, want 30", n)
	}
}

// TestKeysDoNotPinTheirStrings: a subject that is part of a larger string
// (a key cut from a request body) does not keep that string alive in the
// store: the store holds a copy, for limits and lockouts alike.
func TestKeysDoNotPinTheirStrings(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.WithClock(newClock().Now))
	defer s.Close()
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "temp", Attempts: 5, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	limits := []ratekit.Limit{ratekit.FixedWindow(5, time.Hour)}
	before := heapAlloc()
	for i := range 1000 {
		body := strings.Repeat("b", 64<<10) + "user-" + strconv.Itoa(i)
		key := body[64<<10:] // shares body's bytes
		if _, err := storetest.Take(ctx, s, key, limits, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := lo.Attempt(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	grown := heapAlloc() - before
	t.Logf("1000 subjects cut from 64 KiB strings: heap %+d B", grown)
	if grown > 8<<20 {
		t.Fatalf("heap grew %d B: the store keeps the 64 MiB of strings its keys were cut from", grown)
	}
}
