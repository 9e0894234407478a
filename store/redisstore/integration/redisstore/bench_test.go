package redisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
)

// roundTrips counts the commands a client sends: each Process is one round
// trip.
type roundTrips struct{ n atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

// warm runs n concurrent Takes so that the pool's connections (each opened
// with a handshake of several commands) exist before counting.
func warm(b *testing.B, s ratekit.Store, keys []string, limits []ratekit.Limit, n int) {
	take(b, s, keys[0], limits, 1)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = storetest.Take(context.Background(), s, keys[i], limits, 1) }()
	}
	wg.Wait()
}

// BenchmarkTake measures parallel Takes over 10,000 subjects on the shared
// standalone server (a real redis-server when one is on PATH), 32 goroutines
// per CPU. Besides ns/op and allocs/op it reports round trips per decision
// and Redis CPU per decision (µs, from INFO commandstats).
func BenchmarkTake(b *testing.B) {
	srv := redistest.Standalone(b)
	b.Logf("server: %s", srv.Kind)
	for _, tc := range redistest.BenchCases() {
		b.Run(tc.Name, func(b *testing.B) {
			hook := &roundTrips{}
			c := srv.NewClient(&redis.Options{PoolSize: 64})
			defer c.Close()
			c.AddHook(hook)
			s := newStore(b, c, redistest.Prefix(b))
			keys := make([]string, 10_000)
			for i := range keys {
				keys[i] = "user-" + strconv.Itoa(i)
			}
			warm(b, s, keys, tc.Limits, 64) // load the script and open the pool's connections
			p := storetest.MustPrepare(b, s, tc.Limits...)
			parallel(b, srv, hook, len(keys), func(i int) error {
				_, err := p.Take(context.Background(), keys[i], 1)
				return err
			})
		})
	}
}

// BenchmarkFloor runs redistest.FloorScript (one EVALSHA of INCRBY, and
// PEXPIRE for a new key) through go-redis as BenchmarkTake runs the store:
// the floor that BenchmarkTake/fixed is compared with.
func BenchmarkFloor(b *testing.B) {
	srv := redistest.Standalone(b)
	hook := &roundTrips{}
	c := srv.NewClient(&redis.Options{PoolSize: 64})
	defer c.Close()
	c.AddHook(hook)
	floor := redis.NewScript(redistest.FloorScript)
	prefix := redistest.Prefix(b)
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = prefix + ":{user-" + strconv.Itoa(i) + "}"
	}
	if err := floor.Load(context.Background(), c).Err(); err != nil {
		b.Fatal(err)
	}
	parallel(b, srv, hook, len(keys), func(i int) error {
		return floor.EvalSha(context.Background(), c, keys[i:i+1], 1, 3_600_000).Err()
	})
}

// parallel runs do(i) for subjects i in [0, n), from 32 goroutines per CPU,
// and reports ns/op, allocs/op, round trips per call (counted by hook) and
// Redis CPU per script call (INFO commandstats).
func parallel(b *testing.B, srv *redistest.Server, hook *roundTrips, n int, do func(i int) error) {
	calls0, usec0 := redistest.ScriptCPU(srv.Addr)
	hook.n.Store(0)
	redistest.RunParallel(b, n, do)
	b.ReportMetric(float64(hook.n.Load())/float64(b.N), "roundtrips/op")
	if calls, usec := redistest.ScriptCPU(srv.Addr); calls > calls0 {
		b.ReportMetric((usec-usec0)/(calls-calls0), "redis-µs/op")
	}
}
