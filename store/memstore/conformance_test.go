package memstore_test

import (
	"testing"
	"time"
	_ "time/tzdata" // the calendar cases' zones, on machines without a zone database

	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := newClock()
		d := storetest.NewDraw()
		s := memstore.New(memstore.WithClock(c.Now), memstore.WithRandom(d.Float64))
		return storetest.Harness{Store: s, Advance: c.Advance, Exact: true, Draw: d}
	})
}

func TestCalendar(t *testing.T) {
	storetest.RunCalendar(t, func(t *testing.T, start time.Time) storetest.Harness {
		c := storetest.NewClock(start)
		return storetest.Harness{Store: memstore.New(memstore.WithClock(c.Now)), Advance: c.Advance, Exact: true}
	})
}

func TestOverrides(t *testing.T) {
	storetest.RunOverrides(t, func(t *testing.T) storetest.Harness {
		c := newClock()
		return storetest.Harness{Store: memstore.New(memstore.WithClock(c.Now)), Advance: c.Advance, Exact: true}
	})
}
