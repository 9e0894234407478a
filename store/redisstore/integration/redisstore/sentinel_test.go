package redisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// sentinelOptions are the README's failover client settings.
func sentinelOptions() *redis.FailoverOptions {
	return &redis.FailoverOptions{
		PoolSize:        128,
		ConnMaxIdleTime: -1,
		DialTimeout:     500 * time.Millisecond,
		ReadTimeout:     500 * time.Millisecond,
		WriteTimeout:    500 * time.Millisecond,
		DialerRetries:   1,
		MaxRetries:      -1,

		AutoPipelineOptions: redisstore.ClientOptions("").AutoPipelineOptions,
	}
}

// TestSentinelFailover: a store over a go-redis failover client (a master,
// two replicas, three sentinels, all real) decides exactly; when the master
// is SIGKILLed, decisions resume within 15 s (about down-after + the
// sentinels' election), the engine is there on the promoted replica, the
// store is exact again, and no key of the store is left without a TTL.
func TestSentinelFailover(t *testing.T) {
	ctx := context.Background()
	sn := redistest.StartSentinel(t)
	prefix := redistest.Prefix(t)
	clients := make([]*redis.Client, 4)
	stores := make([]*redisstore.Store, 4)
	for i := range clients {
		clients[i] = sn.NewClient(sentinelOptions())
		t.Cleanup(func() { clients[i].Close() })
		stores[i] = newStore(t, clients[i], prefix)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := stores[0].Ping(pctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	exact := func(phase string) {
		t.Helper()
		warmPools(t, clients, 200/len(clients))
		for _, l := range redistest.ExactLimits() {
			allowed, errs := redistest.Burst(stores, phase+"-"+l.Name(), []ratekit.Limit{l}, 200)
			if errs != 0 || allowed != 100 {
				t.Fatalf("%s, %s: %d allowed, %d errors; want exactly 100, 0 errors", phase, l.Name(), allowed, errs)
			}
		}
	}
	exact("before")

	limits := []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}
	decide := func() error {
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond) // the middleware's default timeout
		defer cancel()
		_, err := storetest.Take(cctx, stores[0], "steady", limits, 1)
		return err
	}
	// The writes so far reach both replicas before the kill: what a
	// failover can lose is only what the master acknowledged and had not
	// yet sent, which WAIT bounds (see docs/operations.md).
	if m, err := sn.Master(ctx); err != nil {
		t.Fatal(err)
	} else {
		mc := redis.NewClient(&redis.Options{Addr: m})
		n, err := mc.Do(ctx, "WAIT", 2, 2000).Int()
		mc.Close()
		if err != nil || n != 2 {
			t.Fatalf("WAIT: %d replicas acknowledged (%v), want 2", n, err)
		}
	}
	old, err := sn.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	failures := 0
	for decide() != nil {
		failures++
		if time.Since(killed) > 15*time.Second {
			t.Fatalf("no decision %s after the master %s was killed", time.Since(killed), old)
		}
		time.Sleep(50 * time.Millisecond) // the pace of a client retrying, not a race
	}
	resumed := time.Since(killed)
	now, err := sn.WaitNewMaster(ctx, old, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("master %s killed; decisions resumed after %s on %s (%d failed calls)", old, resumed.Round(time.Millisecond), now, failures)
	for _, l := range redistest.ExactLimits() { // the denials in force before the failover hold
		if d, err := storetest.Take(ctx, stores[1], "before-"+l.Name(), []ratekit.Limit{l}, 1); err != nil || d.Allowed {
			t.Fatalf("%s after the failover: %+v %v, want denied (100 of 100 used before)", l.Name(), d, err)
		}
	}
	exact("after")

	master := redis.NewClient(&redis.Options{Addr: now})
	defer master.Close()
	var cursor uint64
	keys := 0
	for {
		batch, next, err := master.Scan(ctx, cursor, prefix+":*", 1000).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range batch {
			keys++
			if ttl, err := master.PTTL(ctx, k).Result(); err != nil || ttl < 0 {
				t.Fatalf("key %s has no TTL (%v, %v)", k, ttl, err)
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if keys == 0 {
		t.Fatal("no key of the store on the promoted master")
	}
	t.Logf("%s keys of the store on the promoted master, every one with a TTL", strconv.Itoa(keys))
}

// warmPools opens n connections in each client's pool, one after another,
// retrying a dial that times out, before a burst of n concurrent calls
// per client. The burst then measures the store's decisions, not a storm
// of 200 dials at once, which on a loaded machine can outlast the README's
// 500 ms dial timeout. The connections stay in the pool (ConnMaxIdleTime
// is -1).
func warmPools(t *testing.T, clients []*redis.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range clients {
		var held []*redis.Conn
		for len(held) < n {
			cn := c.Conn()
			if err := cn.Ping(context.Background()).Err(); err != nil {
				cn.Close()
				if time.Now().After(deadline) {
					t.Fatalf("could not open %d connections to the master: %v", n, err)
				}
				continue
			}
			held = append(held, cn)
		}
		for _, cn := range held {
			cn.Close() // back to the pool
		}
	}
}
