package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestMultiLimitAtomicity: a denial by the tight limit B leaves the loose
// limit A's state in Redis byte for byte unchanged, and any number of limits
// costs one round trip.
func TestMultiLimitAtomicity(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		c := tg.newClient()
		t.Cleanup(func() { c.Close() })
		hook := &roundTrips{}
		c.AddHook(hook)
		s := newStore(t, c, redistest.Prefix(t))
		for _, a := range storetest.Algorithms(1000, time.Hour) {
			t.Run(a.Name(), func(t *testing.T) {
				loose, tight := a.Named("loose"), ratekit.FixedWindow(2, time.Hour).Named("tight")
				limits := []ratekit.Limit{loose, tight}
				subject := "k-" + a.Name()
				take(t, s, subject, limits, 2)
				keys, _ := s.Keys(subject, limits)
				before := dump(t, c, keys[0])
				for range 3 {
					if d := take(t, s, subject, limits, 1); d.Allowed || d.Limit.Name() != "tight" {
						t.Fatalf("not denied by the tight limit: %+v", d)
					}
				}
				if after := dump(t, c, keys[0]); after != before {
					t.Fatalf("loose limit's key changed by denials:\n%s\n%s", before, after)
				}
			})
		}
		for _, n := range []int{1, 2, 8} {
			limits := make([]ratekit.Limit, n)
			for i := range limits {
				limits[i] = storetest.Algorithms(100, time.Hour)[i%8].Named(fmt.Sprint("l", i))
			}
			take(t, s, "rt", limits, 1) // the script is loaded and a connection open
			hook.n.Store(0)
			for range 10 {
				take(t, s, "rt", limits, 1)
			}
			if got := hook.n.Load(); got != 10 {
				t.Fatalf("%d limits: %d round trips for 10 decisions, want 10", n, got)
			}
		}
	})
}

// dump returns a key's value as Redis serializes it.
func dump(t *testing.T, c redis.UniversalClient, key string) string {
	t.Helper()
	v, err := c.Dump(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("DUMP %s: %v", key, err)
	}
	return v
}

// horizon is the longest TTL a limit's keys may have.
func horizon(l ratekit.Limit) time.Duration {
	h := l.Spec().Window + l.Spec().Precision
	if iv := l.Spec().Interval; iv > 0 {
		h = iv * time.Duration(l.Spec().Quota)
	}
	return max(h, l.Spec().Block)
}

// TestNoImmortalKeys runs a random workload over every algorithm, with and
// without blocks, then scans the prefix: every key has a TTL, and none is
// longer than its limit's horizon.
func TestNoImmortalKeys(t *testing.T) {
	targets(t, func(t *testing.T, tg target) {
		c := tg.newClient()
		t.Cleanup(func() { c.Close() })
		prefix := redistest.Prefix(t)
		s := newStore(t, c, prefix)
		var limits []ratekit.Limit
		for _, l := range storetest.Algorithms(5, 2*time.Minute) {
			limits = append(limits, l, l.Block(3*time.Minute).Named(l.Name()+"-b"))
		}
		byID := map[string]ratekit.Limit{}
		for _, l := range limits {
			byID[l.Spec().ID] = l
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for range 3000 {
			l := limits[rng.IntN(len(limits))]
			take(t, s, fmt.Sprint("s", rng.IntN(40)), []ratekit.Limit{l}, int64(rng.IntN(3)))
		}
		keys := keyTTLs(t, tg, prefix)
		for k, ttl := range keys {
			l, ok := byID[limitID(k)]
			if !ok {
				t.Fatalf("key %s belongs to no limit", k)
			}
			if ttl <= 0 || ttl > horizon(l) {
				t.Errorf("key %s: TTL %v, want in (0, %v]", k, ttl, horizon(l))
			}
		}
		n := len(keys)
		if n == 0 {
			t.Fatal("the workload stored nothing")
		}
		t.Logf("%d keys, all with a TTL within their horizon", n)
	})
}

// limitID returns the name:algorithm:fingerprint part of a key.
func limitID(key string) string {
	i := len(key)
	for j := 0; j < len(key); j++ {
		if key[j] == '}' {
			i = j + 2
			break
		}
	}
	id := key[i:]
	if len(id) > 6 && id[len(id)-6:] == ":block" {
		id = id[:len(id)-6]
	}
	return id
}

// TestSameMillisecondBurst sends 10,000 SlidingLog requests in one
// millisecond of a fake clock (and, on real Redis, as one concurrent burst):
// the log holds exactly as many entries as were allowed.
func TestSameMillisecondBurst(t *testing.T) {
	l := ratekit.SlidingLog(500, time.Minute)
	check := func(t *testing.T, s *redisstore.Store, c redis.UniversalClient, concurrent bool) {
		var allowed int64
		if concurrent {
			var errs int64
			if allowed, errs = redistest.Burst([]*redisstore.Store{s}, "k", []ratekit.Limit{l}, 10_000); errs != 0 {
				t.Fatalf("%d errors", errs)
			}
		} else {
			for range 10_000 {
				if take(t, s, "k", []ratekit.Limit{l}, 1).Allowed {
					allowed++
				}
			}
		}
		keys, _ := s.Keys("k", []ratekit.Limit{l})
		if n := c.ZCard(context.Background(), keys[0]).Val(); n != allowed || allowed != 500 {
			t.Fatalf("%d allowed, %d entries in the log; want 500 and 500", allowed, n)
		}
	}
	t.Run("miniredis-one-millisecond", func(t *testing.T) {
		m := miniredis.RunT(t)
		redistest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), m)
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		check(t, newStore(t, c, "burst"), c, false)
	})
	t.Run("redis-server-concurrent", func(t *testing.T) {
		c := redistest.Standalone(t).NewClient(nil)
		t.Cleanup(func() { c.Close() })
		check(t, newStore(t, c, redistest.Prefix(t)), c, true)
	})
	t.Run("memstore-one-millisecond", func(t *testing.T) {
		clock := redistest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
		s := memstore.New(memstore.WithClock(clock.Now))
		allowed := 0
		for range 10_000 {
			if take(t, s, "k", []ratekit.Limit{l}, 1).Allowed {
				allowed++
			}
		}
		if d := take(t, s, "k", []ratekit.Limit{l}, 0); allowed != 500 || d.Remaining != 0 {
			t.Fatalf("%d allowed, %d remaining; want 500, 0", allowed, d.Remaining)
		}
	})
}
