package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestPingWarnsOfEviction: Ping logs one warning for a Redis whose
// maxmemory-policy may evict the store's keys, and none for noeviction or
// without maxmemory.
func TestPingWarnsOfEviction(t *testing.T) {
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"}, true},
		{[]string{"--maxmemory", "64mb", "--maxmemory-policy", "volatile-lfu"}, true},
		{[]string{"--maxmemory", "64mb", "--maxmemory-policy", "noeviction"}, false},
		{[]string{"--maxmemory", "0", "--maxmemory-policy", "allkeys-lru"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			srv := redistest.Private(t, tc.args...)
			c := srv.NewClient(nil)
			t.Cleanup(func() { c.Close() })
			var logs bytes.Buffer
			s, err := redisstore.New(c, redisstore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Ping(context.Background()); err != nil {
				t.Fatal(err)
			}
			warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), srv.Addr)
			if warned != tc.warn || strings.Count(logs.String(), "level=WARN") > 1 {
				t.Fatalf("log %q, want a warning: %t", logs.String(), tc.warn)
			}
		})
	}
}

// TestDenialsSurviveEviction blocks 200 subjects (GCRA with a 10-minute
// block) and 200 lockout accounts on a Redis with maxmemory 16 MB under
// allkeys-lru and allkeys-lfu, then writes other keys at 4 MB a second for 4
// seconds while the subjects keep asking. Redis evicts thousands of keys; not
// one denied subject or account is let through: each denied call TOUCHes its
// block and counters, so eviction sees them in use. (Redis keeps idle time in
// whole seconds, so the pressure lasts seconds, as it does in production.)
func TestDenialsSurviveEviction(t *testing.T) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu"} {
		t.Run(policy, func(t *testing.T) {
			srv := redistest.Private(t, "--maxmemory", "16mb", "--maxmemory-policy", policy)
			c := srv.NewClient(&redis.Options{PoolSize: 8})
			t.Cleanup(func() { c.Close() })
			ctx := context.Background()
			l, lo := blocking(t, newStore(t, c, "evict"))
			const subjects = 200
			for i := range subjects {
				key := "subject-" + strconv.Itoa(i)
				for range 2 {
					if _, err := l.Allow(ctx, key); err != nil {
						t.Fatal(err)
					}
				}
				for range 4 {
					if _, err := lo.Attempt(ctx, key); err != nil {
						t.Fatal(err)
					}
				}
			}
			fill(t, c, 8<<20)                   // half full before the pressure starts
			time.Sleep(1100 * time.Millisecond) // let the filler age one LRU tick, as older data does

			var admitted, asked atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						for i := w; i < subjects; i += 4 {
							select {
							case <-stop:
								return
							default:
							}
							key := "subject-" + strconv.Itoa(i)
							d, err := l.Allow(ctx, key)
							if err == nil && d.Allowed {
								admitted.Add(1)
							}
							a, err := lo.Attempt(ctx, key)
							if err == nil && a.Allowed {
								admitted.Add(1)
							}
							asked.Add(2)
						}
					}
				}()
			}
			for range 16 { // 4 MB a second for 4 seconds
				next := time.Now().Add(250 * time.Millisecond)
				fill(t, c, 1<<20)
				time.Sleep(time.Until(next))
			}
			close(stop)
			wg.Wait()
			evicted := evictedKeys(t, c)
			t.Logf("%s: %d keys evicted, %d denied calls asked again, %d admitted", policy, evicted, asked.Load(), admitted.Load())
			if evicted < 1000 {
				t.Fatalf("only %d keys evicted: no memory pressure", evicted)
			}
			if admitted.Load() != 0 {
				t.Fatalf("%d of %d calls of blocked subjects admitted after eviction", admitted.Load(), asked.Load())
			}
		})
	}
}

// blocking returns the limits of the eviction and OOM tests on s: a GCRA of
// 1 a minute with a 10-minute block, and a lockout of 3 attempts in 10
// minutes with a 10-minute block.
func blocking(t *testing.T, s *redisstore.Store) (*ratekit.Limiter, *lockout.Lockout) {
	t.Helper()
	l, err := ratekit.New(s, ratekit.GCRA(1, time.Minute, 1).Block(10*time.Minute).Named("api"))
	if err != nil {
		t.Fatal(err)
	}
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 3, Window: 10 * time.Minute, Block: 10 * time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	return l, lo
}

// fill writes about n bytes of 1 KB values under keys of their own.
func fill(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	value := strings.Repeat("x", 1024)
	ctx := context.Background()
	for i := 0; i < n/1024; i += 100 {
		p := c.Pipeline()
		for j := range 100 {
			p.Set(ctx, fmt.Sprintf("filler:%d:%d", time.Now().UnixNano(), i+j), value, 0)
		}
		if _, err := p.Exec(ctx); err != nil && !strings.Contains(err.Error(), "OOM") {
			t.Fatal(err)
		}
	}
}

func evictedKeys(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "evicted_keys:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("INFO stats has no evicted_keys")
	return 0
}

// TestDenialsHoldAtOOM fills a noeviction Redis to its maxmemory. A subject
// whose next request would start a block is denied (the block cannot be
// written; the counters deny), a subject already blocked stays denied, and a
// blocked lockout account too; a new subject's first request, which needs a
// write, fails with an error for the error policy, never a denial.
func TestDenialsHoldAtOOM(t *testing.T) {
	srv := redistest.Private(t, "--maxmemory", "4mb", "--maxmemory-policy", "noeviction")
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	l, lo := blocking(t, newStore(t, c, "oom"))
	for _, key := range []string{"at-quota", "blocked"} {
		if d, err := l.Allow(ctx, key); err != nil || !d.Allowed {
			t.Fatalf("%s, first request: %+v %v", key, d, err)
		}
	}
	if d, err := l.Allow(ctx, "blocked"); err != nil || d.Allowed || !d.Blocked {
		t.Fatalf("blocked, second request: %+v %v", d, err)
	}
	for range 4 {
		if _, err := lo.Attempt(ctx, "mallory"); err != nil {
			t.Fatal(err)
		}
	}
	fill(t, c, 8<<20)
	for i := 0; c.Set(ctx, "small:"+strconv.Itoa(i), "x", 0).Err() == nil; i++ { // up to the last byte
	}
	if err := c.Set(ctx, "one-more", "x", 0).Err(); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("Redis is not out of memory: %v", err)
	}

	d, err := l.Allow(ctx, "at-quota")
	if err != nil || d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Minute {
		t.Fatalf("at quota, its block unwritable: %+v %v; want denied by the counters, Retry-After within a minute", d, err)
	}
	if d, err := l.Allow(ctx, "blocked"); err != nil || d.Allowed || !d.Blocked {
		t.Fatalf("blocked, at OOM: %+v %v; want still blocked", d, err)
	}
	if a, err := lo.Attempt(ctx, "mallory"); err != nil || a.Allowed {
		t.Fatalf("blocked account at OOM: %+v %v; want denied", a, err)
	}
	if d, err := l.Allow(ctx, "newcomer"); err == nil {
		t.Fatalf("a new subject's first request at OOM: %+v, want an error (it needs a write)", d)
	}
}
