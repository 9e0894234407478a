package lease_test

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestConformance: memstore behind a lease store passes the suite every
// store passes, on a fake clock, timing to the microsecond included. The
// suite's fixed window (quota 5 per hour) is leased, up to 5 units at a
// time; its other limits go to memstore as they are. One instance leases
// alone here, so it under-admits nothing and its answers are exact.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		d := storetest.NewDraw()
		ms := memstore.New(memstore.WithClock(c.Now), memstore.WithRandom(d.Float64))
		t.Cleanup(func() { ms.Close() })
		fixed := storetest.Algorithms(5, time.Hour)[0]
		s, err := lease.New(ms, []ratekit.Limit{fixed}, lease.WithClock(c.Now), lease.WithMargin(0), lease.WithMaxLease(5))
		if err != nil {
			t.Fatal(err)
		}
		return storetest.Harness{Store: s, Advance: c.Advance, Exact: true, Draw: d}
	})
}
