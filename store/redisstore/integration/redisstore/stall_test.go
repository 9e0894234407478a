package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// TestStalledReservesTakeNoSlots freezes Redis (SIGSTOP) for 300 ms while 20
// requests reach an InFlight(4) limit with a 3 s lease through Middleware
// (fail open, 100 ms timeout): each gives up after the timeout and is served
// unlimited. Through a client that sends each call on its own connection,
// every request writes its reserve call, and Redis runs the 20 calls when it
// resumes (SIGCONT), past their deadlines: they take nothing. Through a
// client with ClientOptions' AutoPipelineOptions, the calls beyond 8 in
// flight go through the autopipeliner: those written in the batches that
// Redis froze on run late alike, and those held behind them are never
// written. Either way Redis runs exactly the calls written, and the
// subject's 4 slots are free at once, not refused for a lease.
func TestStalledReservesTakeNoSlots(t *testing.T) {
	t.Run("connection per call", func(t *testing.T) { testStalledReserves(t, false) })
	t.Run("pipelined", func(t *testing.T) { testStalledReserves(t, true) })
}

func testStalledReserves(t *testing.T, pipelined bool) {
	const requests = 20
	srv := redistest.Private(t)
	opts := &redis.Options{PoolSize: 2 * requests, ContextTimeoutEnabled: true}
	if pipelined {
		opts.AutoPipelineOptions = redisstore.ClientOptions("").AutoPipelineOptions
	}
	c := srv.NewClientAsGiven(opts)
	t.Cleanup(func() { c.Close() })
	var stalled atomic.Bool                       // counting the calls made during the stall
	var piped atomic.Int64                        // calls that went to the autopipeliner
	c.AddHook(sendHook(func(cmds []redis.Cmder) { // before the store's hook: every call
		for _, cmd := range cmds {
			if stalled.Load() && strings.Contains(fmt.Sprintf("%T", cmd), "piped") {
				piped.Add(1)
			}
		}
	}))
	s := newStore(t, c, redistest.Prefix(t))
	var written atomic.Int64                      // calls written during the stall
	c.AddHook(sendHook(func(cmds []redis.Cmder) { // after the store's hook: the calls it sends
		if stalled.Load() {
			written.Add(int64(len(cmds)))
		}
	}))
	// Five instances, one store: each Limiter sends at most 4 of the
	// subject's requests to the store at once (InFlight(4)), so the 20
	// stalled calls come from 4 requests of each.
	var limiter *ratekit.Limiter
	var handlers []http.Handler
	for range 5 {
		l, err := ratekit.New(s, ratekit.InFlight(4).Lease(3*time.Second).Named("conc"))
		if err != nil {
			t.Fatal(err)
		}
		limiter = l
		handlers = append(handlers, ratekit.Middleware(l, ratekit.ByHeader("X-Subject"))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	}
	serve := func(i int) int {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Subject", "stalled")
		w := httptest.NewRecorder()
		handlers[i%len(handlers)].ServeHTTP(w, r)
		return w.Code
	}
	// Each instance's first request loads the library and shows its engine
	// Redis's clock.
	for i := range handlers {
		if code := serve(i); code != http.StatusOK {
			t.Fatalf("first request of instance %d: %d", i, code)
		}
	}
	warmPool(t, c, requests) // every stalled request then writes its call at once
	calls, _ := redistest.ScriptCPU(srv.Addr)

	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	stalled.Store(true)
	frozen := time.Now()
	codes := make([]int, requests)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = serve(i)
		}()
	}
	wg.Wait()
	stalled.Store(false) // every caller has gone: nothing more is written
	// The stall lasts 300 ms, as a DEBUG SLEEP 0.3 would: the scenario's
	// length (past the timeout and the engine's margin), not a wait for a race.
	time.Sleep(time.Until(frozen.Add(300 * time.Millisecond)))
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	for i, code := range codes {
		if code != http.StatusOK {
			t.Fatalf("request %d during the stall: %d, want 200 (failed open)", i, code)
		}
	}
	if pipelined && piped.Load() == 0 {
		t.Fatal("no call went to the autopipeliner")
	}
	if !pipelined && written.Load() != requests {
		t.Fatalf("%d calls written, want %d", written.Load(), requests)
	}
	waitScriptCalls(t, srv.Addr, calls+float64(written.Load()))

	ctx := context.Background()
	if d, err := limiter.Peek(ctx, "stalled"); err != nil || d.Remaining != 4 {
		t.Fatalf("after the stall: %+v, %v; want 4 slots free", d, err)
	}
	for i := range 5 {
		r, err := limiter.Reserve(ctx, "stalled", 1)
		if err != nil || r.Decision.Allowed != (i < 4) {
			t.Fatalf("reserve %d after the stall: %+v, %v; want the first 4 admitted", i, r, err)
		}
		defer r.Release(ctx)
	}
}

// warmPool leaves n connections of c idle in its pool, each past its
// handshake, so that n concurrent calls write their commands without
// dialling (a handshake would wait on a frozen server and never send them).
func warmPool(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	ctx := context.Background()
	conns := make([]*redis.Conn, n)
	for i := range conns {
		conns[i] = c.Conn()
		if err := conns[i].Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cn := range conns {
		cn.Close()
	}
	if idle := c.PoolStats().IdleConns; idle < uint32(n) {
		t.Fatalf("%d idle connections, want %d", idle, n)
	}
}

// waitScriptCalls waits until the server at addr has run want script calls
// (FCALL, EVALSHA, EVAL) in all: the calls a frozen server was sent ran
// once it resumed.
func waitScriptCalls(t *testing.T, addr string, want float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		calls, _ := redistest.ScriptCPU(addr)
		if calls >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server ran %.0f script calls in 5 s, want %.0f", calls, want)
		}
		time.Sleep(5 * time.Millisecond) // polling the server's progress, not a race in the code
	}
}
