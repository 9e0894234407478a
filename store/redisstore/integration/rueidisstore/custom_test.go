package rueidisstore_test

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

// quotaPerMinute is a custom algorithm: p1 requests per minute, counted in
// a key whose TTL restarts with every admission. It answers with a table
// of its own rather than the one the engine lends.
const quotaPerMinute = `function(_, key, quota)
  local used = tonumber(redis.call('GET', key) or '0')
  local remaining = math.max(quota - used, 0)
  if cost > quota then return { allowed = false, remaining = remaining, reset = 0, retry = 0, flags = 1 } end
  if used + cost > quota then return { allowed = false, remaining = remaining, reset = 60000000, retry = 60000000, flags = 0 } end
  if not charge then return { allowed = true, remaining = remaining, reset = 0, retry = 0, flags = 0 } end
  return { allowed = true, remaining = remaining, reset = 0, retry = 0, flags = 0,
    after_remaining = remaining - cost, after_reset = 60000000, op = 'set', a = string.format('%d', used + cost), b = 60000 }
end`

// TestCustomAlgorithm: a store with a custom algorithm runs it (in a
// library of its own), with the built-in limits, all or nothing.
func TestCustomAlgorithm(t *testing.T) {
	c := newClient(t, redistest.Standalone(t).Addr)
	s := newStore(t, c, redistest.Prefix(t), rueidisstore.WithAlgorithm("perminute", quotaPerMinute))
	limits := []ratekit.Limit{ratekit.Custom("perminute", 2, time.Minute, [3]int64{2, 0, 0}), ratekit.FixedWindow(10, time.Minute)}
	for i := range 2 {
		if d := take(t, s, "worker", limits, 1); !d.Allowed || d.States[0].Remaining != int64(1-i) {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	if d := take(t, s, "worker", limits, 1); d.Allowed || d.Limit.Spec().Algorithm != "perminute" || d.States[1].Remaining != 8 {
		t.Fatalf("third call: %+v; want denied by perminute, the fixed window charged twice", d)
	}
	if _, err := rueidisstore.New(c, rueidisstore.WithAlgorithm("fixed", quotaPerMinute)); err == nil {
		t.Fatal("a built-in name was accepted for a custom algorithm")
	}
}
