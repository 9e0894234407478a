package rueidisstore_test

import (
	"testing"

	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

// TestExactness sends 200 concurrent requests through 4 separate clients (4
// stores, as 4 instances of a service would) and expects exactly 100
// allowed, 20 times over, for each algorithm, on standalone Redis and on the
// cluster. rueidis pipelines the concurrent calls of each client.
func TestExactness(t *testing.T) {
	targets(t, func(t *testing.T, addrs []string) {
		prefix := redistest.Prefix(t)
		var stores []*rueidisstore.Store
		for range 4 {
			stores = append(stores, newStore(t, newClient(t, addrs...), prefix))
		}
		redistest.CheckExactness(t, stores)
	})
}
