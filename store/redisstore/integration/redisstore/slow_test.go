package redisstore_test

import (
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// The load of TestSlowRedis: slowWorkers goroutines call Take back to back
// for slowPoint, each call bounded by the middleware's default timeout, over
// slowSubjects subjects.
const (
	slowWorkers  = 64
	slowPoint    = 2500 * time.Millisecond
	slowSubjects = 10_000
	slowRamp     = 500 * time.Millisecond // the workers start one by one over it, as traffic rises
	slowAssertAt = 30 * time.Millisecond  // the asserted point: ClientOptions decides ≥ 99%
	slowAttempts = 3                      // of the asserted point, on a busy machine
)

// slowSettings are the client options compared: go-redis's defaults (with
// ContextTimeoutEnabled, which New requires) and redisstore.ClientOptions.
var slowSettings = []struct {
	name string
	opts func(addr string) *redis.Options
}{
	{"go-redis defaults", func(addr string) *redis.Options {
		return &redis.Options{Addr: addr, ContextTimeoutEnabled: true}
	}},
	{"ClientOptions", redisstore.ClientOptions},
}

// TestSlowRedis puts a real redis-server behind a proxy that delays every
// reply, and runs a closed-loop load of Takes (64 goroutines, 100 ms per
// call, 10,000 subjects) through a new client at each point, its goroutines
// starting one by one over the first 500 ms: every connection is opened
// under the latency, as when traffic rises. (Started all at once, 64 new
// connections cost a -race build on two busy cores tens of milliseconds
// each, which is not what is measured here.)
// It reports, per added latency, the share of calls that got a decision,
// their p50 and p99 latency, the connections the client opened, and the
// longest time the test binary went without a CPU (a busy machine's stalls
// make calls time out whatever the settings).
//
// It asserts that with redisstore.ClientOptions at 30 ms at least 99% of the
// calls get a decision. With -short it runs only that point; otherwise it
// sweeps 0 to 60 ms with both settings, and runs ClientOptions at 60 and
// 80 ms on connections opened before the delay (about 45 s in all).
func TestSlowRedis(t *testing.T) {
	srv := redistest.Private(t)
	proxy := redistest.NewDelayProxy(t, srv.Addr, 0)
	prefix := redistest.Prefix(t)
	limits := []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Minute)}
	direct := srv.NewClient(nil)
	t.Cleanup(func() { direct.Close() })
	take(t, newStore(t, direct, prefix), "load", limits, 1) // load the script: the points measure connections, not NOSCRIPT

	run := func(opts func(string) *redis.Options, delay time.Duration) slowResult {
		return slowLoad(t, proxy, opts(proxy.Addr), prefix, limits, delay, false)
	}
	recommended := slowSettings[len(slowSettings)-1]
	// assert checks the asserted point, measured again when a busy machine
	// may have spoiled it.
	assert := func(r slowResult) {
		t.Helper()
		for attempt := 1; ; attempt++ {
			t.Logf("%s at %v, attempt %d: %s", recommended.name, slowAssertAt, attempt, r)
			if r.decidedShare() >= 0.99 {
				return
			}
			if attempt == slowAttempts {
				t.Errorf("%s at %v of added latency: %s; want at least 99%% decided", recommended.name, slowAssertAt, r)
				return
			}
			r = run(recommended.opts, slowAssertAt)
		}
	}

	if testing.Short() {
		assert(run(recommended.opts, slowAssertAt))
		return
	}

	delays := []time.Duration{0, 10, 20, 30, 40, 50, 60}
	results := make([][]slowResult, len(slowSettings))
	for i, s := range slowSettings {
		for _, d := range delays {
			results[i] = append(results[i], run(s.opts, d*time.Millisecond))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d goroutines × %v per point, %v per call, a new client per point\n", slowWorkers, slowPoint, ratekit.DefaultTimeout)
	fmt.Fprintf(&b, "%-8s", "added")
	for _, s := range slowSettings {
		fmt.Fprintf(&b, " | %-48s", s.name)
	}
	fmt.Fprintf(&b, "\n%-8s", "latency")
	for range slowSettings {
		fmt.Fprintf(&b, " | %8s %8s %8s %6s %6s %6s", "decided", "p50", "p99", "calls", "conns", "stall")
	}
	for j, d := range delays {
		fmt.Fprintf(&b, "\n%5d ms", d)
		for i := range slowSettings {
			r := results[i][j]
			fmt.Fprintf(&b, " | %7.2f%% %8v %8v %6d %6d %6v", 100*r.decidedShare(), r.p50, r.p99, r.calls, r.conns, r.stall)
		}
	}
	for i, s := range slowSettings {
		var held []string
		for j, d := range delays {
			if results[i][j].decidedShare() >= 0.99 {
				held = append(held, fmt.Sprint(int64(d)))
			}
		}
		fmt.Fprintf(&b, "\n%s: at least 99%% decided at %s ms", s.name, strings.Join(held, ", "))
	}
	for _, d := range []time.Duration{60, 80} { // connections opened before Redis slowed down
		r := slowLoad(t, proxy, recommended.opts(proxy.Addr), prefix, limits, d*time.Millisecond, true)
		fmt.Fprintf(&b, "\n%s, %d connections opened at 0 ms, then %d ms: %s", recommended.name, slowWorkers, d, r)
	}
	t.Log(b.String())
	assert(results[len(results)-1][slices.Index(delays, slowAssertAt/time.Millisecond)])
}

// slowResult is one point of TestSlowRedis.
type slowResult struct {
	calls, decided int
	p50, p99       time.Duration // of every call, decided or not
	conns          int64         // connections the client opened
	stall          time.Duration // the longest the test binary went unscheduled (a busy machine)
}

func (r slowResult) decidedShare() float64 {
	if r.calls == 0 {
		return 0
	}
	return float64(r.decided) / float64(r.calls)
}

func (r slowResult) String() string {
	return fmt.Sprintf("%.2f%% of %d calls decided, p50 %v, p99 %v, %d connections opened, longest stall %v",
		100*r.decidedShare(), r.calls, r.p50, r.p99, r.conns, r.stall)
}

// slowLoad makes a client with opts and a store on it, sets the proxy's
// delay, and runs the load for slowPoint. When warm, the client first opens
// slowWorkers connections without delay.
func slowLoad(t *testing.T, proxy *redistest.Proxy, opts *redis.Options, prefix string, limits []ratekit.Limit, delay time.Duration, warm bool) slowResult {
	t.Helper()
	proxy.SetDelay(0)
	client := redis.NewClient(opts)
	defer client.Close()
	s := newStore(t, client, prefix)
	if warm {
		held := make([]*redis.Conn, slowWorkers) // each holds its own connection of the pool until Close
		for i := range held {
			held[i] = client.Conn()
			if err := held[i].Ping(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range held {
			c.Close()
		}
	}
	proxy.SetDelay(delay)
	conns := proxy.Accepted()

	stop := make(chan struct{})
	stalled := make(chan time.Duration)
	go func() { stalled <- watchStalls(stop) }()

	end := time.Now().Add(slowPoint)
	var next atomic.Int64
	var mu sync.Mutex
	var all []time.Duration
	decided := 0
	var wg sync.WaitGroup
	for w := range slowWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(w) * slowRamp / slowWorkers)
			var mine []time.Duration
			ok := 0
			for time.Now().Before(end) {
				subject := fmt.Sprintf("subject-%d", next.Add(1)%slowSubjects)
				ctx, cancel := context.WithTimeout(context.Background(), ratekit.DefaultTimeout)
				start := time.Now()
				_, err := storetest.Take(ctx, s, subject, limits, 1)
				mine = append(mine, time.Since(start))
				cancel()
				if err == nil {
					ok++
				}
			}
			mu.Lock()
			all = append(all, mine...)
			decided += ok
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stop)
	r := slowResult{calls: len(all), decided: decided, conns: proxy.Accepted() - conns, stall: <-stalled}
	slices.Sort(all)
	if len(all) > 0 {
		q := func(f float64) time.Duration { return all[int(f*float64(len(all)-1))].Round(100 * time.Microsecond) }
		r.p50, r.p99 = q(0.50), q(0.99)
	}
	return r
}

// watchStalls sleeps 5 ms at a time until stop and returns the longest a
// sleep overran: how long the binary went without a CPU.
func watchStalls(stop <-chan struct{}) time.Duration {
	var worst time.Duration
	for {
		select {
		case <-stop:
			return worst.Round(time.Millisecond)
		default:
		}
		start := time.Now()
		time.Sleep(5 * time.Millisecond)
		worst = max(worst, time.Since(start)-5*time.Millisecond)
	}
}

// TestClientOptions: ClientOptions makes a client that New accepts, whose
// new connection costs a store call two round trips, HELLO and the FCALL:
// neither CLIENT SETINFO nor CLIENT MAINT_NOTIFICATIONS.
func TestClientOptions(t *testing.T) {
	srv := redistest.Standalone(t)
	prefix := redistest.Prefix(t)
	limits := []ratekit.Limit{ratekit.FixedWindow(2, time.Minute)}
	loader := srv.NewClient(nil)
	t.Cleanup(func() { loader.Close() })
	take(t, newStore(t, loader, prefix), "load", limits, 1) // load the library: no "Function not found" below

	c := redis.NewClient(redisstore.ClientOptions(srv.Addr))
	t.Cleanup(func() { c.Close() })
	trips := &tripNames{}
	c.AddHook(trips)
	s := newStore(t, c, prefix)
	if d := take(t, s, "subject", limits, 1); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("first Take: %+v", d)
	}
	if want := []string{"hello", "fcall"}; !slices.Equal(trips.names(), want) {
		t.Errorf("round trips of a new connection's first call: %q, want %q", trips.names(), want)
	}
}

// tripNames is a go-redis hook that records the round trips of a client as
// they end, those of its connections' handshakes among them: a command's
// name, or the names of a pipeline's commands joined by "+".
type tripNames struct {
	mu    sync.Mutex
	trips []string
}

func (h *tripNames) add(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.trips = append(h.trips, name)
}

func (h *tripNames) names() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.trips)
}

func (h *tripNames) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *tripNames) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd) // a handshake runs within its first command
		h.add(strings.ToLower(cmd.Name()))
		return err
	}
}

func (h *tripNames) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			names = append(names, strings.ToLower(c.Name()))
		}
		err := next(ctx, cmds)
		h.add(strings.Join(names, "+"))
		return err
	}
}
