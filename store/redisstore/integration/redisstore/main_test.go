package redisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

func TestMain(m *testing.M) {
	if inFlightChild() {
		return
	}
	redistest.Main(m)
}

// target is one Redis deployment the tests run against.
type target struct {
	name      string
	newClient func() redis.UniversalClient
	masters   func() []*redis.Client // for SCAN; the caller closes them
}

func standaloneTarget(t *testing.T) target {
	srv := redistest.Standalone(t)
	return target{
		name:      "standalone",
		newClient: func() redis.UniversalClient { return srv.NewClient(nil) },
		masters:   func() []*redis.Client { return []*redis.Client{srv.NewClient(nil)} },
	}
}

func clusterTarget(t *testing.T) target {
	c := redistest.StartCluster(t)
	return target{
		name:      "cluster",
		newClient: func() redis.UniversalClient { return c.NewClient(nil) },
		masters:   c.Masters,
	}
}

// targets runs f on standalone Redis and on the 3-master cluster.
func targets(t *testing.T, f func(t *testing.T, tg target)) {
	t.Run("standalone", func(t *testing.T) { f(t, standaloneTarget(t)) })
	t.Run("cluster", func(t *testing.T) { f(t, clusterTarget(t)) })
}

func newStore(t testing.TB, c redis.Scripter, prefix string, opts ...redisstore.Option) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(c, append([]redisstore.Option{redisstore.WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func take(t testing.TB, s ratekit.Store, key string, limits []ratekit.Limit, cost int64) ratekit.Decision {
	t.Helper()
	d, err := storetest.Take(context.Background(), s, key, limits, cost)
	if err != nil {
		t.Fatalf("Take(%q, cost %d): %v", key, cost, err)
	}
	return d
}
