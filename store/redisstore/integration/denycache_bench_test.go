package integration_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/redisstore"
)

// BenchmarkHotKeyDenied is the attack path: 64 goroutines ask about one
// subject that every limit denies, through a Limiter on the shared
// standalone Redis, with and without a deny cache. It reports decisions per
// second and Redis script calls per decision (INFO commandstats).
//
// "denied" holds a denial for an hour; "lifting" is a GCRA of 10 per second
// with a burst of 1, whose denial lifts every 100 ms, when every goroutine
// that finds it expired asks Redis: that is the cache's worst case.
func BenchmarkHotKeyDenied(b *testing.B) {
	srv := redistest.Standalone(b)
	b.Logf("server: %s", srv.Kind)
	for _, sc := range []struct {
		name  string
		limit ratekit.Limit
	}{
		{"denied", ratekit.FixedWindow(1, time.Hour)},
		{"lifting", ratekit.GCRA(10, time.Second, 1)},
	} {
		for _, cached := range []bool{false, true} {
			name := sc.name + "/redis"
			if cached {
				name = sc.name + "/denycache"
			}
			b.Run(name, func(b *testing.B) {
				c := srv.NewClient(&redis.Options{PoolSize: 64})
				defer c.Close()
				var store ratekit.Store
				rs, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(b)))
				if err != nil {
					b.Fatal(err)
				}
				if store = rs; cached {
					store = denycache.New(rs)
				}
				l, err := ratekit.New(store, sc.limit)
				if err != nil {
					b.Fatal(err)
				}
				hotKey(b, srv, l)
			})
		}
	}
}

// hotKey runs l.Allow on one subject from 64 goroutines and reports
// decisions/s and Redis script calls per decision.
func hotKey(b *testing.B, srv *redistest.Server, l *ratekit.Limiter) {
	ctx := context.Background()
	if _, err := l.Allow(ctx, "203.0.113.9"); err != nil { // loads the script, uses the quota
		b.Fatal(err)
	}
	admin := srv.NewClient(nil)
	defer admin.Close()
	calls0 := scriptCalls(admin)
	b.ReportAllocs()
	b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Allow(ctx, "203.0.113.9"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(scriptCalls(admin)-calls0)/float64(b.N), "rediscalls/decision")
}

// scriptCalls returns the script and function calls (EVALSHA, EVAL, FCALL)
// the server has run.
func scriptCalls(c *redis.Client) int64 {
	var n int64
	for _, line := range strings.Split(c.Info(context.Background(), "commandstats").Val(), "\n") {
		if !strings.HasPrefix(line, "cmdstat_evalsha:") && !strings.HasPrefix(line, "cmdstat_eval:") && !strings.HasPrefix(line, "cmdstat_fcall:") {
			continue
		}
		for _, f := range strings.Split(strings.TrimSpace(line[strings.IndexByte(line, ':')+1:]), ",") {
			if k, v, _ := strings.Cut(f, "="); k == "calls" {
				x, _ := strconv.ParseInt(v, 10, 64)
				n += x
			}
		}
	}
	return n
}
