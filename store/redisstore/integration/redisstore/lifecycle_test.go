package redisstore_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestInFlightExact runs 8 instances of a service, each with its own client
// and HTTP server, sharing InFlight(10) per subject on one Redis: 500
// concurrent slow requests on 2 subjects. The handlers count themselves: at
// no instant are more than 10 of one subject inside. At the end every slot
// is free and no key is left.
func TestInFlightExact(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		prefix := redistest.Prefix(t)
		limit := ratekit.InFlight(10).Named("conc")
		var inside [2]atomic.Int64
		var most [2]atomic.Int64
		var passed, denied atomic.Int64
		var urls []string
		var limiters []*ratekit.Limiter
		for range 8 {
			c := tg.newClient()
			t.Cleanup(func() { c.Close() })
			l, err := ratekit.New(newStore(t, c, prefix), limit)
			if err != nil {
				t.Fatal(err)
			}
			limiters = append(limiters, l)
			h := ratekit.Middleware(l, ratekit.ByHeader("X-Key"), ratekit.WithTimeout(2*time.Second))(
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					s := r.Header.Get("X-Key")[0] - 'a'
					n := inside[s].Add(1)
					for m := most[s].Load(); n > m && !most[s].CompareAndSwap(m, n); m = most[s].Load() {
					}
					time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
					inside[s].Add(-1)
				}))
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			urls = append(urls, srv.URL)
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 500}}
		var wg sync.WaitGroup
		for i := range 500 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("GET", urls[i%8], nil)
				req.Header.Set("X-Key", string(rune('a'+i%2)))
				res, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusOK:
					passed.Add(1)
				case http.StatusTooManyRequests:
					denied.Add(1)
				default:
					t.Errorf("status %d", res.StatusCode)
				}
			}()
		}
		wg.Wait()
		t.Logf("%s: %d passed, %d denied; at most %d and %d inside", tg.name, passed.Load(), denied.Load(), most[0].Load(), most[1].Load())
		for s := range most {
			if most[s].Load() > 10 || most[s].Load() < 1 {
				t.Errorf("subject %d: %d in flight at most, want 1 to 10", s, most[s].Load())
			}
		}
		if passed.Load()+denied.Load() != 500 || denied.Load() == 0 {
			t.Errorf("%d passed and %d denied of 500: the limit was never reached", passed.Load(), denied.Load())
		}
		for _, k := range []string{"a", "b"} {
			if d, err := limiters[0].Peek(context.Background(), k); err != nil || d.Remaining != 10 {
				t.Errorf("after the requests, %s: %+v %v; want 10 slots free", k, d, err)
			}
		}
		if n := countKeys(t, tg, prefix); n != 0 {
			t.Errorf("%d keys left after every request ended", n)
		}
	})
}

// countKeys counts the keys under prefix on every master.
func countKeys(t *testing.T, tg target, prefix string) int {
	n := 0
	for _, m := range tg.masters() {
		keys, err := m.Keys(context.Background(), prefix+":*").Result()
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		n += len(keys)
	}
	return n
}

// The crash test's child: an instance that takes every slot and holds it
// until it is killed, renewing its leases.
const childEnv = "RATEKIT_INFLIGHT_CHILD"

// crashLease is the lease of the crash test: slots of a dead instance come
// back within it.
const crashLease = 2 * time.Second

// inFlightChild runs the child when the environment names one: it reports
// "held" on stdout once it holds the slots, and then waits to be killed.
func inFlightChild() bool {
	addr, prefix := os.Getenv(childEnv), os.Getenv(childEnv+"_PREFIX")
	if addr == "" {
		return false
	}
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	s, err := redisstore.New(c, redisstore.WithPrefix(prefix))
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	l, err := ratekit.New(s, ratekit.InFlight(10).Lease(crashLease))
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	for range 10 {
		r, err := l.Reserve(context.Background(), "tenant", 1)
		if err != nil || !r.Decision.Allowed {
			fmt.Println("refused", err)
			os.Exit(2)
		}
	}
	fmt.Println("held")
	select {}
}

// TestInFlightCrash starts an instance in a process of its own that takes
// all 10 slots, checks that it keeps them past its lease (it renews them),
// SIGKILLs it, and measures how long the other instances wait for the
// slots: at most the lease.
func TestInFlightCrash(t *testing.T) {
	srv := redistest.Standalone(t)
	prefix := redistest.Prefix(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+srv.Addr, childEnv+"_PREFIX="+prefix)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	l, err := ratekit.New(newStore(t, c, prefix), ratekit.InFlight(10).Lease(crashLease))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	deadline := time.Now().Add(crashLease + crashLease/2) // past the lease: held only by renewals
	for time.Now().Before(deadline) {
		if r, err := l.Reserve(ctx, "tenant", 1); err != nil || r.Decision.Allowed {
			t.Fatalf("a live instance's slot was taken: %+v, %v", r, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no release, no renewal
		t.Fatal(err)
	}
	killed := time.Now()
	_ = cmd.Wait()
	var first, all time.Duration
	for all == 0 {
		d, err := l.Peek(ctx, "tenant")
		if err != nil {
			t.Fatal(err)
		}
		if d.Remaining > 0 && first == 0 {
			first = time.Since(killed)
		}
		if d.Remaining == 10 {
			all = time.Since(killed)
		}
		if time.Since(killed) > 2*crashLease {
			t.Fatalf("%d slots back %s after the kill", d.Remaining, time.Since(killed))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("first slot back %s, all 10 back %s after the kill (lease %s)", first.Round(time.Millisecond), all.Round(time.Millisecond), crashLease)
	if all > crashLease+100*time.Millisecond {
		t.Errorf("slots back after %s, past the lease %s", all, crashLease)
	}
	if r, err := l.Reserve(ctx, "tenant", 1); err != nil || !r.Decision.Allowed {
		t.Errorf("after the lease: %+v %v; want a slot", r, err)
	}
}

// TestSettleExact: 1,000 concurrent requests through 8 clients reserve 10
// each and settle a random cost; the stored count is the sum of the costs.
func TestSettleExact(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		prefix := redistest.Prefix(t)
		limit := ratekit.FixedWindow(100_000, time.Hour).Named("tokens")
		var limiters []*ratekit.Limiter
		var stores []*redisstore.Store
		for range 8 {
			c := tg.newClient()
			t.Cleanup(func() { c.Close() })
			s := newStore(t, c, prefix)
			l, err := ratekit.New(s, limit)
			if err != nil {
				t.Fatal(err)
			}
			limiters, stores = append(limiters, l), append(stores, s)
		}
		var sum atomic.Int64
		var wg sync.WaitGroup
		for i := range 1000 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				r, err := limiters[i%8].Reserve(ctx, "tenant", 10)
				if err != nil || !r.Decision.Allowed {
					t.Errorf("reserve: %+v, %v", r, err)
					return
				}
				used := rand.Int64N(11)
				if err := r.Settle(ctx, used); err != nil {
					t.Error(err)
					return
				}
				sum.Add(used)
			}()
		}
		wg.Wait()
		keys, err := stores[0].Keys("tenant", []ratekit.Limit{limit})
		if err != nil {
			t.Fatal(err)
		}
		got, err := tg.newClient().Get(context.Background(), keys[0]).Int64()
		if err != nil || got != sum.Load() {
			t.Fatalf("stored %d (%v), want the sum of the settled costs, %d", got, err, sum.Load())
		}
		t.Logf("%s: stored %d = the sum of 1,000 settled costs", tg.name, got)
	})
}

// TestCountIfOnRedis: only 2xx count, exactly, under concurrency through 4
// instances; a refund does not lift the block a denial started.
func TestCountIfOnRedis(t *testing.T) {
	srv := redistest.Standalone(t)
	prefix := redistest.Prefix(t)
	limit := ratekit.FixedWindow(1000, time.Hour).Block(time.Hour)
	var hs []http.Handler
	var calls atomic.Int64
	for range 4 {
		c := srv.NewClient(nil)
		t.Cleanup(func() { c.Close() })
		l, err := ratekit.New(newStore(t, c, prefix), limit)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, ratekit.Middleware(l, ratekit.ByHeader("X-Key"), ratekit.WithTimeout(2*time.Second),
			ratekit.WithCountIf(func(status int) bool { return status < 300 }))(
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1)%4 == 0 {
					w.WriteHeader(http.StatusUnauthorized)
				}
			})))
	}
	serve := func(i int, key string) int {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-Key", key)
		rec := httptest.NewRecorder()
		hs[i%4].ServeHTTP(rec, req)
		return rec.Code
	}
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Add(1)
		go func() { defer wg.Done(); serve(i, "a") }()
	}
	wg.Wait()
	l, _ := ratekit.New(newStore(t, srv.NewClient(nil), prefix), limit)
	if d, err := l.Peek(context.Background(), "a"); err != nil || d.Remaining != 1000-300 {
		t.Fatalf("remaining %d (%v), want %d: 300 of 400 requests count", d.Remaining, err, 700)
	}
	// a block stands through refunds: fill "b", be denied (blocked), and
	// let the requests that fail refund
	small, _ := ratekit.New(newStore(t, srv.NewClient(nil), prefix), ratekit.FixedWindow(2, time.Hour).Block(time.Hour).Named("small"))
	h := ratekit.Middleware(small, ratekit.ByHeader("X-Key"), ratekit.WithCountIf(func(status int) bool { return status < 300 }))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }))
	codes := make([]int, 0, 6)
	r1, _ := small.Reserve(context.Background(), "b", 1)
	r2, _ := small.Reserve(context.Background(), "b", 1)
	for range 2 {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-Key", "b")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		codes = append(codes, rec.Code)
	}
	_ = r1.Settle(context.Background(), 0)
	_ = r2.Settle(context.Background(), 0)
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("X-Key", "b")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	codes = append(codes, rec.Code)
	if fmt.Sprint(codes) != "[429 429 429]" {
		t.Fatalf("statuses %v; want 429 while the block stands, refunds or not", codes)
	}
}
