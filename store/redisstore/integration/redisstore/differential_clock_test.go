package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit/internal/redistest"
)

// expiryProbe reads a key's PTTL, whether it exists, and Redis's time in
// ms, in one script: a script reads every key at one instant.
var expiryProbe = redis.NewScript(`
local t = redis.call('TIME')
return { redis.call('PTTL', KEYS[1]), redis.call('EXISTS', KEYS[1]), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) }`)

// reading is one expiryProbe answer.
type reading struct{ pttl, exists, nowMS int64 }

func probe(t *testing.T, c *redis.Client, key string) reading {
	t.Helper()
	v, err := expiryProbe.Run(context.Background(), c, []string{key}).Int64Slice()
	if err != nil || len(v) != 3 {
		t.Fatalf("probe %s: %v %v", key, v, err)
	}
	return reading{v[0], v[1], v[2]}
}

// TestDifferentialClockExpiry checks that miniredis on redistest.NewRedisClock
// expires keys as a real redis-server does: a key set with PX 5 answers
// PTTL 5, 4, 3, 2, 1, 0, exists at 0, and is gone 1 ms later; the clock's
// millisecond, not its microseconds, ages keys, as Redis's expiry is kept
// to the millisecond. The same walk runs on a real server in real time.
func TestDifferentialClockExpiry(t *testing.T) {
	const ms = time.Millisecond
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		// start 700 µs into a millisecond: the key's expiry is that
		// millisecond + 5, so half a millisecond later PTTL reads 4
		start := time.Date(2026, 11, 22, 12, 0, 0, 700_000, time.UTC)
		clock := redistest.NewRedisClock(start, m)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { c.Close() })
		if err := c.Set(context.Background(), "k", "v", 5*ms).Err(); err != nil {
			t.Fatal(err)
		}
		us := time.Microsecond
		steps := []time.Duration{0, 500 * us, 500 * us, ms, ms, ms, 300 * us, 999 * us, us, 0}
		want := []int64{5, 4, 4, 3, 2, 1, 0, 0, -2, -2}
		for i, d := range steps {
			clock.Advance(d)
			r := probe(t, c, "k")
			exists := int64(1)
			if want[i] < 0 {
				exists = 0
			}
			if r.pttl != want[i] || r.exists != exists || r.nowMS != clock.Now().UnixMilli() {
				t.Fatalf("step %d (+%v, at %v): PTTL %d, EXISTS %d, TIME %d ms; want %d, %d, %d", i, d, clock.Now().Sub(start), r.pttl, r.exists, r.nowMS, want[i], exists, clock.Now().UnixMilli())
			}
		}
		// the old clock, for contrast: FastForward drops the key at PTTL 0
		m2 := miniredis.RunT(t)
		old := redistest.NewClock(start, m2)
		m2.Set("k", "v")
		m2.SetTTL("k", 5*ms)
		old.Advance(5 * ms)
		if m2.Exists("k") {
			t.Fatal("miniredis's FastForward kept a key at TTL 0: NewRedisClock's aging is no longer needed")
		}
	})
	t.Run("redis-server", func(t *testing.T) {
		srv := redistest.Standalone(t)
		c := srv.NewClient(nil)
		t.Cleanup(func() { c.Close() })
		key := redistest.Prefix(t) + ":expiry"
		// The key's PTTL 0 lasts one millisecond of real time; a probe
		// can miss it on a loaded machine, so walk until one has seen it.
		var seen []reading
		for attempt := 0; attempt < 50; attempt++ {
			seen = walk(t, c, key)
			for _, r := range seen {
				if r.pttl == 0 {
					return
				}
			}
		}
		t.Fatalf("no probe saw PTTL 0 on a live key in 50 walks; the last: %v", seen)
	})
}

// walk sets key with PX 5 and probes it until it is gone, checking the
// readings: PTTL counts down from 5 (never up), the key exists exactly
// while PTTL reads 0 or more, and once gone (PTTL -2) it stays gone. (The
// time TIME reads in a script can differ by a millisecond from the one its
// key lookups use, so the readings are not compared with it.)
func walk(t *testing.T, c *redis.Client, key string) []reading {
	t.Helper()
	if err := c.Set(context.Background(), key, "v", 5*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	var out []reading
	for prev := int64(5); ; {
		r := probe(t, c, key)
		out = append(out, r)
		switch {
		case r.pttl >= 0 && (r.exists != 1 || r.pttl > prev):
			t.Fatalf("live key: PTTL %d after %d, EXISTS %d: %v", r.pttl, prev, r.exists, out)
		case r.pttl < 0 && (r.pttl != -2 || r.exists != 0):
			t.Fatalf("gone key: PTTL %d, EXISTS %d: %v", r.pttl, r.exists, out)
		case r.pttl < 0:
			return out
		}
		if len(out) > 100000 {
			t.Fatal(fmt.Sprintf("key still there after %d probes: %v", len(out), out[len(out)-3:]))
		}
		prev = r.pttl
	}
}
