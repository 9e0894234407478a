package rueidisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"strconv"
	"testing"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit/internal/redistest"
)

// BenchmarkTake is redisstore's BenchmarkTake through rueidis: parallel
// Takes over 10,000 subjects on the shared standalone server, 32 goroutines
// per CPU, one client whose pipeline carries every goroutine's calls. It
// reports ns/op, allocs/op, script calls per decision and Redis CPU per
// decision (µs, INFO commandstats).
func BenchmarkTake(b *testing.B) {
	srv := redistest.Standalone(b)
	b.Logf("server: %s", srv.Kind)
	for _, tc := range redistest.BenchCases() {
		b.Run(tc.Name, func(b *testing.B) {
			s := newStore(b, newClient(b, srv.Addr), redistest.Prefix(b))
			keys := make([]string, 10_000)
			for i := range keys {
				keys[i] = "user-" + strconv.Itoa(i)
			}
			for _, k := range keys[:64] { // load the library
				take(b, s, k, tc.Limits, 1)
			}
			calls0, usec0 := redistest.ScriptCPU(srv.Addr)
			p := storetest.MustPrepare(b, s, tc.Limits...)
			redistest.RunParallel(b, len(keys), func(i int) error {
				_, err := p.Take(context.Background(), keys[i], 1)
				return err
			})
			if calls, usec := redistest.ScriptCPU(srv.Addr); calls > calls0 {
				b.ReportMetric((calls-calls0)/float64(b.N), "calls/op")
				b.ReportMetric((usec-usec0)/(calls-calls0), "redis-µs/op")
			}
		})
	}
}

// BenchmarkFloor runs redistest.FloorScript (one EVALSHA of INCRBY, and
// PEXPIRE for a new key) through rueidis as BenchmarkTake runs the store:
// the floor that BenchmarkTake/fixed is compared with.
func BenchmarkFloor(b *testing.B) {
	srv := redistest.Standalone(b)
	c := newClient(b, srv.Addr)
	floor := rueidis.NewLuaScript(redistest.FloorScript)
	prefix := redistest.Prefix(b)
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = prefix + ":{user-" + strconv.Itoa(i) + "}"
	}
	ctx := context.Background()
	if err := floor.Exec(ctx, c, keys[:1], []string{"1", "3600000"}).Error(); err != nil {
		b.Fatal(err)
	}
	calls0, usec0 := redistest.ScriptCPU(srv.Addr)
	redistest.RunParallel(b, len(keys), func(i int) error {
		return floor.Exec(ctx, c, keys[i:i+1], []string{"1", "3600000"}).Error()
	})
	if calls, usec := redistest.ScriptCPU(srv.Addr); calls > calls0 {
		b.ReportMetric((calls-calls0)/float64(b.N), "calls/op")
		b.ReportMetric((usec-usec0)/(calls-calls0), "redis-µs/op")
	}
}
