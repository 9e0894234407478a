package memstore_test

import (
	"testing"

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
