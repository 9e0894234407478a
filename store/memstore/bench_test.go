package memstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/store/storetest"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/memstore"
)

// The benchmarks measure the per-call cost with ordinary subjects (short,
// like an IP address or a user ID), on the real clock.

var benchLimits = map[string][]ratekit.Limit{
	"fixed":      {ratekit.FixedWindow(1<<40, time.Hour)},
	"gcra":       {ratekit.GCRA(1e6, time.Second, 1<<40)},
	"two-limits": {ratekit.FixedWindow(1<<40, time.Hour), ratekit.GCRA(1e6, time.Second, 1<<40).Block(time.Minute)},
	"calendar":   {ratekit.Calendar(1<<40, calendar.Month, newYork)},
}

var newYork, _ = time.LoadLocation("America/New_York")

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256)
	}
	return keys
}

func BenchmarkTake(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"fixed", "gcra", "two-limits", "calendar"} {
		limits := benchLimits[name]
		b.Run(name+"/one-key", func(b *testing.B) {
			s := memstore.New()
			b.ReportAllocs()
			p := storetest.MustPrepare(b, s, limits...)
			for b.Loop() {
				if _, err := p.Take(ctx, "203.0.113.7", 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/10k-keys", func(b *testing.B) {
			s := memstore.New()
			keys := benchKeys(10_000)
			b.ReportAllocs()
			i := 0
			p := storetest.MustPrepare(b, s, limits...)
			for b.Loop() {
				if _, err := p.Take(ctx, keys[i%len(keys)], 1); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkTakeParallel(b *testing.B) {
	ctx := context.Background()
	limits := benchLimits["two-limits"]
	s := memstore.New()
	keys := benchKeys(10_000)
	var next atomic.Int64
	b.ReportAllocs()
	p := storetest.MustPrepare(b, s, limits...)
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) * 7919
		for pb.Next() {
			if _, err := p.Take(ctx, keys[i%len(keys)], 1); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkAllow is a decision as users ask for it, through
// ratekit.Limiter.Allow: 10,000 subjects, callers on every core, every call
// allowed.
func BenchmarkAllow(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"fixed", "gcra"} {
		b.Run(name, func(b *testing.B) {
			s := memstore.New()
			defer s.Close()
			l, err := ratekit.New(s, benchLimits[name]...)
			if err != nil {
				b.Fatal(err)
			}
			keys := benchKeys(10_000)
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)) * 7919
				for pb.Next() {
					if _, err := l.Allow(ctx, keys[i%len(keys)]); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

// BenchmarkTakeLongSubject is the cost of a subject past the raw limit
// (memstore digests it).
func BenchmarkTakeLongSubject(b *testing.B) {
	ctx := context.Background()
	limits := benchLimits["fixed"]
	for _, n := range []int{100, 1 << 10, 1 << 20} {
		b.Run(strconv.Itoa(n)+"B", func(b *testing.B) {
			s := memstore.New()
			key := strings.Repeat("k", n)
			b.ReportAllocs()
			p := storetest.MustPrepare(b, s, limits...)
			for b.Loop() {
				if _, err := p.Take(ctx, key, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLockout(b *testing.B) {
	ctx := context.Background()
	for _, op := range []string{"check", "attempt"} {
		b.Run(op, func(b *testing.B) {
			lo, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "temp", Attempts: 5, Window: time.Minute, Block: time.Minute}}})
			if err != nil {
				b.Fatal(err)
			}
			keys := benchKeys(10_000)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := keys[i%len(keys)]
				if op == "check" {
					_, err = lo.Check(ctx, k)
				} else {
					_, err = lo.Attempt(ctx, k)
				}
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkReputation(b *testing.B) {
	ctx := context.Background()
	p := reputation.DefaultPolicy()
	s := memstore.New()
	keys := benchKeys(10_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.RecordGood(ctx, keys[i%len(keys)], p); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
