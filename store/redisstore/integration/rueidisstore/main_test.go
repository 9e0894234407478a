package rueidisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newClient returns a rueidis client of the nodes at addrs (one server, or
// any nodes of a cluster) with the store's recommended options, closed with
// the test.
func newClient(t testing.TB, addrs ...string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidisstore.ClientOption(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func newStore(t testing.TB, c rueidis.Client, prefix string, opts ...rueidisstore.Option) *rueidisstore.Store {
	t.Helper()
	s, err := rueidisstore.New(c, append([]rueidisstore.Option{rueidisstore.WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// targets runs f on standalone Redis and on the 3-master cluster; addrs are
// the nodes to give a client.
func targets(t *testing.T, f func(t *testing.T, addrs []string)) {
	t.Run("standalone", func(t *testing.T) { f(t, []string{redistest.Standalone(t).Addr}) })
	t.Run("cluster", func(t *testing.T) { f(t, redistest.StartCluster(t).Addrs) })
}

func take(t testing.TB, s ratekit.Store, key string, limits []ratekit.Limit, cost int64) ratekit.Decision {
	t.Helper()
	d, err := storetest.Take(context.Background(), s, key, limits, cost)
	if err != nil {
		t.Fatalf("Take(%q, cost %d): %v", key, cost, err)
	}
	return d
}
