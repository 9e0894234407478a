package redisstore_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestReputationConformance runs the reputation suite on miniredis with a
// fake clock (against the reference model), and on a real redis-server and
// the real cluster (200 concurrent updates against the model replayed
// serially).
func TestReputationConformance(t *testing.T) {
	t.Run("miniredis-fake-clock", func(t *testing.T) {
		storetest.RunReputation(t, func(t *testing.T) storetest.ReputationHarness {
			m := miniredis.RunT(t)
			clock := redistest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), m)
			c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
			t.Cleanup(func() { c.Close() })
			return storetest.ReputationHarness{Store: newStore(t, c, "rep"), Advance: clock.Advance, Now: clock.Now, Exact: true}
		})
	})
	targets(t, func(t *testing.T, tg target) {
		c := tg.newClient()
		t.Cleanup(func() { c.Close() })
		storetest.RunReputation(t, func(t *testing.T) storetest.ReputationHarness {
			return storetest.ReputationHarness{Store: newStore(t, c, redistest.Prefix(t)), Advance: redistest.Sleep}
		})
	})
}

// TestReputationSameAnswers plays 3,000 random calls on memstore and on
// redisstore over miniredis, sharing one fake clock: every answer must be
// identical, scores bit for bit.
func TestReputationSameAnswers(t *testing.T) {
	m := miniredis.RunT(t)
	clock := redistest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), m)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	stores := []reputation.Store{memstore.New(memstore.WithClock(clock.Now)), newStore(t, c, "same")}
	p := reputation.DefaultPolicy()
	p.Penalty, p.Quiet = 0.07, 3*time.Minute // exercise a policy other than the default
	rng := rand.New(rand.NewPCG(11, 12))
	ctx := context.Background()
	for i := range 3000 {
		clock.Advance(time.Duration(rng.IntN([]int{1500, 600_000, 7_200_000}[rng.IntN(3)])) * time.Millisecond)
		op := rng.IntN(3)
		var got [2]reputation.Reputation
		for j, s := range stores {
			var err error
			switch op {
			case 0:
				got[j], err = s.RecordViolation(ctx, "tenant", p)
			case 1:
				got[j], err = s.RecordGood(ctx, "tenant", p)
			default:
				got[j], err = s.Reputation(ctx, "tenant", p)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		a, b := got[0], got[1]
		if a.Score != b.Score || a.Violations != b.Violations || a.Good != b.Good || a.TTL != b.TTL ||
			!a.LastViolation.Equal(b.LastViolation) || !a.Updated.Equal(b.Updated) {
			t.Fatalf("call %d (op %d): memstore and redisstore differ\nmem:   %+v\nredis: %+v", i, op, a, b)
		}
	}
}

// TestReputationKey: the reputation key follows the kit's schema, shares the
// tenant's hash tag and always has a TTL.
func TestReputationKey(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	prefix := redistest.Prefix(t)
	s := newStore(t, c, prefix)
	p := reputation.DefaultPolicy()
	key, err := s.ReputationKey("user-1", p)
	if err != nil {
		t.Fatal(err)
	}
	if want := prefix + ":{user-1}:" + p.ID(); key != want {
		t.Fatalf("key %q, want %q", key, want)
	}
	if _, err := s.RecordViolation(context.Background(), "user-1", p); err != nil {
		t.Fatal(err)
	}
	if ttl := c.PTTL(context.Background(), key).Val(); ttl <= 0 || ttl > 30*time.Minute {
		t.Fatalf("PTTL %v, want (0, 30m]", ttl)
	}
}
