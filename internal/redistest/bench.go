package redistest

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// A BenchCase is one set of limits that the Redis stores' BenchmarkTake
// decides: every call admitted (quotas far above the load).
type BenchCase struct {
	Name   string
	Limits []ratekit.Limit
}

// BenchCases returns the sets of limits of BenchmarkTake: each algorithm
// alone, two limits, two with blocks, and eight fixed windows, which shows
// what each further limit of a call costs in Redis.
func BenchCases() []BenchCase {
	eight := make([]ratekit.Limit, 8)
	for i := range eight {
		eight[i] = ratekit.FixedWindow(1<<40, time.Hour).Named("f" + strconv.Itoa(i))
	}
	return []BenchCase{
		{"fixed", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}},
		{"sliding", []ratekit.Limit{ratekit.SlidingWindow(1<<30, time.Hour)}},
		{"log", []ratekit.Limit{ratekit.SlidingLog(store.MaxLogQuota, time.Hour)}},
		{"gcra", []ratekit.Limit{ratekit.GCRA(1e6, time.Second, 1<<40)}},
		{"token", []ratekit.Limit{ratekit.TokenBucket(1e6, time.Second, 1<<40)}},
		{"leaky", []ratekit.Limit{ratekit.LeakyBucket(1<<40, 1e6, time.Second)}},
		{"fixed+gcra", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour), ratekit.GCRA(1e6, time.Second, 1<<40)}},
		{"fixed+gcra/blocks", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour).Block(time.Minute), ratekit.GCRA(1e6, time.Second, 1<<40).Block(time.Minute)}},
		{"fixed*8", eight},
	}
}

// ScriptCPU returns the calls of FCALL, EVALSHA and EVAL on the server at
// addr so far, and their total µs of Redis CPU (INFO commandstats).
func ScriptCPU(addr string) (calls, usec float64) {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info := c.Info(context.Background(), "commandstats").Val()
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_fcall:") && !strings.HasPrefix(line, "cmdstat_evalsha:") && !strings.HasPrefix(line, "cmdstat_eval:") {
			continue
		}
		for _, f := range strings.Split(strings.TrimSpace(line[strings.IndexByte(line, ':')+1:]), ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usec += n
			}
		}
	}
	return calls, usec
}

// RunParallel runs do(i) for subjects i in [0, n) from 32 goroutines per
// CPU, each starting at its own subject, and reports allocations; it
// measures only the calls (the timer is reset before and stopped after).
func RunParallel(b *testing.B, n int, do func(i int) error) {
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(7919))
		for pb.Next() {
			if err := do(i % n); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	b.StopTimer()
}

// FloorScript is the least a Redis rate limiter can do per decision, the
// floor the stores' benchmarks compare with: one script that counts with
// INCRBY and sets the TTL of a new counter. ARGV[1] is the cost, ARGV[2]
// the window in ms; it returns the count.
const FloorScript = `local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n`
