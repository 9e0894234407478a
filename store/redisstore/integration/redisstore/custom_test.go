package redisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// concurrencyLimit is a custom algorithm: at most p1 requests "in flight",
// each holding its slot for p2 ms (a counter whose TTL restarts with every
// admission). It follows the engine's contract: read, decide, and answer in
// the table r the engine lends, with the write to commit.
const concurrencyLimit = `function(r, key, slots, hold_ms)
  local used = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  r.allowed, r.remaining, r.reset, r.retry, r.flags = false, math.max(slots - used, 0), 0, 0, 0
  if ttl > 0 then r.reset = ttl * 1000 end
  if cost > slots then
    r.flags = 1
    return r
  end
  if used + cost > slots then
    r.retry = r.reset
    return r
  end
  r.allowed = true
  if charge then
    r.after_remaining, r.after_reset = r.remaining - cost, hold_ms * 1000
    r.op, r.a, r.b = 'set', int(used + cost), hold_ms
  end
  return r
end`

func TestCustomAlgorithm(t *testing.T) {
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)), redisstore.WithAlgorithm("holds", concurrencyLimit))
	if err != nil {
		t.Fatal(err)
	}
	limit := ratekit.Custom("holds", 3, time.Minute, [3]int64{3, 60_000, 0})
	l, err := ratekit.New(s, limit, ratekit.FixedWindow(100, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		d, err := l.Allow(ctx, "worker")
		if err != nil || !d.Allowed || d.States[0].Remaining != int64(2-i) {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	d, err := l.Allow(ctx, "worker")
	if err != nil || d.Allowed || d.Limit.Spec().Algorithm != "holds" || d.RetryAfter <= 59*time.Second {
		t.Fatalf("fourth request: %+v %v; want denied by holds with a retry of ~60s", d, err)
	}
	if d.States[1].Remaining != 97 {
		t.Fatalf("the fixed window was charged by a denial: %d left", d.States[1].Remaining)
	}
	// the custom algorithm is unknown to a store without it
	plain := newStore(t, c, redistest.Prefix(t))
	if _, err := storetest.Take(ctx, plain, "worker", []ratekit.Limit{limit}, 1); err == nil {
		t.Fatal("a store without the algorithm ran it")
	}
	for _, bad := range []string{"fixed", "Bad-Name", ""} {
		if _, err := redisstore.New(c, redisstore.WithAlgorithm(bad, concurrencyLimit)); err == nil {
			t.Errorf("algorithm name %q accepted", bad)
		}
	}
}
