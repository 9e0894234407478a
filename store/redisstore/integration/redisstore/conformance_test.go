package redisstore_test

import (
	"testing"
	"time"
	_ "time/tzdata" // the calendar cases' zones, on machines without a zone database

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestConformance runs the store suite on miniredis with a fake clock, on a
// real redis-server and on the real cluster, the last two on the real clock.
func TestConformance(t *testing.T) {
	t.Run("miniredis-fake-clock", func(t *testing.T) {
		storetest.Run(t, miniHarness)
	})
	targets(t, func(t *testing.T, tg target) {
		c := tg.newClient()
		t.Cleanup(func() { c.Close() })
		storetest.Run(t, func(t *testing.T) storetest.Harness {
			d := storetest.NewDraw()
			return storetest.Harness{Store: newStore(t, c, redistest.Prefix(t), redisstore.WithRandom(d.Float64)), Advance: redistest.Sleep, Draw: d}
		})
	})
}

// miniHarness is redisstore over miniredis on a fake clock.
func miniHarness(t *testing.T) storetest.Harness {
	m := miniredis.RunT(t)
	clock := redistest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), m)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	d := storetest.NewDraw()
	return storetest.Harness{Store: newStore(t, c, "conf", redisstore.WithRandom(d.Float64)), Advance: clock.Advance, Exact: true, Draw: d}
}

// TestCalendar runs the calendar cases on miniredis with a fake clock: the
// Lua, on miniredis's TIME.
func TestCalendar(t *testing.T) {
	storetest.RunCalendar(t, func(t *testing.T, start time.Time) storetest.Harness {
		m := miniredis.RunT(t)
		clock := redistest.NewRedisClock(start, m)
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		return storetest.Harness{Store: newStore(t, c, "cal"), Advance: clock.Advance, Exact: true}
	})
}

// TestOverrides runs the override suite on miniredis with a fake clock, on
// a real redis-server and on the real cluster (the last two on the real
// clock); the second instance of each case is a store of its own, on a
// client of its own, under the same prefix.
func TestOverrides(t *testing.T) {
	t.Run("miniredis-fake-clock", func(t *testing.T) {
		storetest.RunOverrides(t, func(t *testing.T) storetest.Harness {
			m := miniredis.RunT(t)
			// Redis's own expiry, to the millisecond: an override's key
			// lives through the millisecond before its end
			clock := redistest.NewRedisClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), m)
			client := func() *redis.Client {
				c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
				t.Cleanup(func() { c.Close() })
				return c
			}
			return storetest.Harness{Store: newStore(t, client(), "ovr"), Advance: clock.Advance, Exact: true,
				Twin: func() ratekit.Store { return newStore(t, client(), "ovr") }}
		})
	})
	targets(t, func(t *testing.T, tg target) {
		c, c2 := tg.newClient(), tg.newClient()
		t.Cleanup(func() { c.Close(); c2.Close() })
		storetest.RunOverrides(t, func(t *testing.T) storetest.Harness {
			prefix := redistest.Prefix(t)
			return storetest.Harness{Store: newStore(t, c, prefix), Advance: redistest.Sleep,
				Twin: func() ratekit.Store { return newStore(t, c2, prefix) }}
		})
	})
}
