package denycache_test

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestConformance: memstore behind a deny cache passes the suite every
// store passes, on a fake clock, timing to the microsecond included.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		d := storetest.NewDraw()
		ms := memstore.New(memstore.WithClock(c.Now), memstore.WithRandom(d.Float64))
		t.Cleanup(func() { ms.Close() })
		s := denycache.New(ms, denycache.WithClock(c.Now), denycache.WithMargin(0))
		return storetest.Harness{Store: s, Advance: c.Advance, Exact: true, Draw: d}
	})
}

// TestOverrides: memstore behind a deny cache passes the override suite;
// both Limiters of its two-instance cases share the one cache (a cache of
// another instance keeps its denials until their Retry-After).
func TestOverrides(t *testing.T) {
	storetest.RunOverrides(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		ms := memstore.New(memstore.WithClock(c.Now))
		t.Cleanup(func() { ms.Close() })
		s := denycache.New(ms, denycache.WithClock(c.Now), denycache.WithMargin(0))
		return storetest.Harness{Store: s, Advance: c.Advance, Exact: true}
	})
}
