package fallback_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
)

// BenchmarkTake compares a call through a fallback.Store, closed (the
// primary decides) and open (the local store decides with 4 instances'
// shares), with the same call on memstore alone.
func BenchmarkTake(b *testing.B) {
	limits := []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour).Named("api"), ratekit.GCRA(1<<20, time.Second, 1<<20).Named("burst")}
	ctx := context.Background()
	run := func(b *testing.B, s ratekit.Store) {
		b.ReportAllocs()
		p := storetest.MustPrepare(b, s, limits...)
		for b.Loop() {
			if _, err := p.Take(ctx, "alice", 1); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("memstore", func(b *testing.B) { run(b, memstore.New()) })
	b.Run("closed", func(b *testing.B) {
		s, _ := fallback.New(memstore.New(), memstore.New(), fallback.Config{Instances: 4})
		run(b, s)
	})
	b.Run("open", func(b *testing.B) {
		p := &primary{inner: memstore.New()}
		p.state.Store(refused)
		s, _ := fallback.New(p, memstore.New(), fallback.Config{Instances: 4, Failures: 1, Retry: time.Hour})
		_, _ = storetest.Take(ctx, s, "alice", limits, 1) // opens
		run(b, s)
	})
}
