package rueidisstore_test

import (
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestConformance runs the store suite on a real redis-server and on the
// real cluster, on the real clock, as redisstore's does.
func TestConformance(t *testing.T) {
	targets(t, func(t *testing.T, addrs []string) {
		c := newClient(t, addrs...)
		storetest.Run(t, func(t *testing.T) storetest.Harness {
			d := storetest.NewDraw()
			return storetest.Harness{Store: newStore(t, c, redistest.Prefix(t), rueidisstore.WithRandom(d.Float64)), Advance: redistest.Sleep, Draw: d}
		})
	})
}

// TestReputationConformance runs the reputation suite.
func TestReputationConformance(t *testing.T) {
	targets(t, func(t *testing.T, addrs []string) {
		c := newClient(t, addrs...)
		storetest.RunReputation(t, func(t *testing.T) storetest.ReputationHarness {
			return storetest.ReputationHarness{Store: newStore(t, c, redistest.Prefix(t)), Advance: redistest.Sleep}
		})
	})
}

// TestOverrides runs the override suite on a real redis-server and on the
// real cluster, on the real clock; the second instance of each case is a
// store of its own, on a client of its own, under the same prefix.
func TestOverrides(t *testing.T) {
	targets(t, func(t *testing.T, addrs []string) {
		c, c2 := newClient(t, addrs...), newClient(t, addrs...)
		storetest.RunOverrides(t, func(t *testing.T) storetest.Harness {
			prefix := redistest.Prefix(t)
			return storetest.Harness{Store: newStore(t, c, prefix), Advance: redistest.Sleep,
				Twin: func() ratekit.Store { return newStore(t, c2, prefix) }}
		})
	})
}
