package denycache_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestAllocs: a cached answer of one limit allocates nothing (its Decision
// has no States, as the stores answer); of several, one slice, its States;
// the lookup allocates nothing, but for a subject longer than 64 bytes its
// digest form (65 bytes, apart from every subject kept as it is).
func TestAllocs(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		limits    []ratekit.Limit
		allocs    float64
	}{
		{"one limit", "203.0.113.9", []ratekit.Limit{ratekit.GCRA(1, time.Hour, 1)}, 0},
		{"three limits", "203.0.113.9", []ratekit.Limit{
			ratekit.FixedWindow(1, time.Hour).Named("a"), ratekit.GCRA(10, time.Hour, 10).Named("b"), ratekit.SlidingLog(10, time.Hour).Named("c")}, 1},
		{"long subject", strings.Repeat("k", 500), []ratekit.Limit{ratekit.GCRA(1, time.Hour, 1)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.deny(t, tc.key, tc.limits...)
			ctx := context.Background()
			p, err := f.cache.Prepare(tc.limits)
			if err != nil {
				t.Fatal(err)
			}
			n := testing.AllocsPerRun(1000, func() {
				if d, _ := p.Take(ctx, tc.key, 1); !d.Cached {
					t.Fatal("not cached")
				}
			})
			if n != tc.allocs {
				t.Fatalf("%v allocations per cached answer, want %v", n, tc.allocs)
			}
		})
	}
}

// BenchmarkCachedDenial: parallel cached denials of one hot subject, the
// attack path (compare BenchmarkStoreDenial, the same over memstore alone).
func BenchmarkCachedDenial(b *testing.B) {
	for _, tc := range []struct {
		name   string
		limits []ratekit.Limit
	}{
		{"1limit", []ratekit.Limit{ratekit.GCRA(1, time.Hour, 1)}},
		{"3limits", []ratekit.Limit{ratekit.FixedWindow(1, time.Hour).Named("a"), ratekit.GCRA(10, time.Hour, 10).Named("b"), ratekit.SlidingLog(10, time.Hour).Named("c")}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f := realFixture(b)
			ctx := context.Background()
			for {
				if d, _ := storetest.Take(ctx, f.cache, "hot", tc.limits, 1); d.Cached {
					break
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, _ = storetest.Take(ctx, f.cache, "hot", tc.limits, 1)
				}
			})
			if n := f.inner.calls(); n > 3 {
				b.Fatalf("%d store calls", n)
			}
		})
	}
}

// BenchmarkStoreDenial is BenchmarkCachedDenial/1limit on memstore alone.
func BenchmarkStoreDenial(b *testing.B) {
	f := realFixture(b)
	limits := []ratekit.Limit{ratekit.GCRA(1, time.Hour, 1)}
	ctx := context.Background()
	f.take(b, "hot", 1, limits...)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = storetest.Take(ctx, f.inner, "hot", limits, 1)
		}
	})
}

// realFixture is a deny cache over a counting memstore on the real clock.
func realFixture(b *testing.B) *fixture {
	ms := memstore.New()
	b.Cleanup(func() { ms.Close() })
	inner := &counting{Store: ms}
	return &fixture{inner: inner, cache: denycache.New(inner)}
}
