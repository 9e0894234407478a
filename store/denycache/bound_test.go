package denycache_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
)

// TestMaxEntries: at the bound a new denial is not cached (its subject keeps
// asking the store) and nothing held is evicted; once entries expire, a new
// denial makes room by sweeping.
func TestMaxEntries(t *testing.T) {
	f := newFixture(t, denycache.WithMaxEntries(2))
	short, long := ratekit.FixedWindow(1, time.Second).Named("short"), ratekit.FixedWindow(1, time.Hour).Named("long")
	f.deny(t, "a", short)
	f.deny(t, "b", long)
	f.deny(t, "c", long)
	if n := f.cache.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
	f.cached(t, "a", 1, short)
	f.cached(t, "b", 1, long)
	f.asked(t, "c", 1, long)
	f.clock.Advance(time.Second) // a's denial expires
	f.asked(t, "c", 1, long)     // ... and makes room for c's
	f.cached(t, "c", 1, long)
	if n := f.cache.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
}

// TestSweep: expired entries go by Sweep, and by the sweeps that calls make
// (one per 1/64 s of the cache's clock) without Sweep.
func TestSweep(t *testing.T) {
	f := newFixture(t)
	l := ratekit.FixedWindow(1, time.Minute)
	for i := range 1000 {
		f.deny(t, fmt.Sprint(i), l)
	}
	if n := f.cache.Len(); n != 1000 {
		t.Fatalf("Len = %d", n)
	}
	f.clock.Advance(time.Minute)
	f.cache.Sweep()
	if n := f.cache.Len(); n != 0 {
		t.Fatalf("after Sweep: Len = %d", n)
	}

	for i := range 1000 {
		f.deny(t, fmt.Sprint(i), l)
	}
	f.clock.Advance(time.Minute)
	for range 2 {
		f.take(t, "x", 1, l)
		f.clock.Advance(time.Second / 64)
	}
	if n := f.cache.Len(); n > 1 { // x's own denial may be held
		t.Fatalf("after a second of calls: Len = %d", n)
	}
}

// TestSweepIsBounded: a sweep that a call makes looks at no more than 4,096
// entries, so it never holds the cache for a whole large map; a sweep per
// 1/64 s still covers DefaultMaxEntries several times a second.
func TestSweepIsBounded(t *testing.T) {
	f := newFixture(t)
	l := ratekit.FixedWindow(1, time.Minute)
	for i := range 10_000 {
		f.deny(t, fmt.Sprint(i), l)
	}
	f.clock.Advance(time.Minute)
	f.take(t, "x", 1, l) // one sweep
	if n := f.cache.Len(); n != 10_000-4096 {
		t.Fatalf("after one sweep: Len = %d, want %d", n, 10_000-4096)
	}
	f.clock.Advance(time.Second / 64)
	f.take(t, "y", 1, l) // another
	if n := f.cache.Len(); n != 10_000-2*4096 {
		t.Fatalf("after two sweeps: Len = %d, want %d", n, 10_000-2*4096)
	}
}

// TestLongSubject: a subject over 64 bytes is held as its digest: two that
// differ only in their last byte are told apart.
func TestLongSubject(t *testing.T) {
	f := newFixture(t)
	l := ratekit.FixedWindow(1, time.Minute)
	a, b := strings.Repeat("x", 1000)+"a", strings.Repeat("x", 1000)+"b"
	f.deny(t, a, l)
	f.cached(t, a, 1, l)
	if d := f.asked(t, b, 1, l); !d.Allowed {
		t.Fatalf("another long subject: %+v", d)
	}
}

// TestManyLimitSets: limit sets past the bound the cache tells apart go to
// the store, uncached and correct.
func TestManyLimitSets(t *testing.T) {
	f := newFixture(t)
	for i := range 1100 {
		l := ratekit.FixedWindow(int64(i+1), time.Minute).Named(fmt.Sprintf("n%d", i)) // limits of their own
		f.take(t, "k", int64(i+1), l)
		d := f.take(t, "k", 1, l)
		if d.Allowed || d.Cached {
			t.Fatalf("set %d: %+v", i, d)
		}
		if i >= 1024 {
			f.asked(t, "k", 1, l)
		} else {
			f.cached(t, "k", 1, l)
		}
	}
}

// TestMemoryPerEntry: a denial of one limit for a short subject costs the
// cache about 160 bytes (100,000 of them: some 16 MB).
func TestMemoryPerEntry(t *testing.T) {
	f := newFixture(t)
	l := ratekit.FixedWindow(1, time.Hour)
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("198.51.%d.%d", i/256, i%256)
		f.take(t, keys[i], 1, l)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, k := range keys {
		f.take(t, k, 1, l) // denied by the store: cached
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(f.cache.Len())
	t.Logf("%d entries, %.0f bytes each", f.cache.Len(), per)
	if f.cache.Len() != len(keys) || per > 300 {
		t.Fatalf("%d entries, %.0f bytes each; want %d, at most 300", f.cache.Len(), per, len(keys))
	}
}
