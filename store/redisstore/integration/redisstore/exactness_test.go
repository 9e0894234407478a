package redisstore_test

import (
	"testing"

	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestExactness sends 200 concurrent requests through 4 separate clients (4
// stores, as 4 instances of a service would) and expects exactly 100 allowed,
// 20 times over, for each algorithm, on standalone Redis and on the cluster.
func TestExactness(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		prefix := redistest.Prefix(t)
		var stores []*redisstore.Store
		for range 4 {
			c := tg.newClient()
			t.Cleanup(func() { c.Close() })
			stores = append(stores, newStore(t, c, prefix))
		}
		redistest.CheckExactness(t, stores)
	})
}
