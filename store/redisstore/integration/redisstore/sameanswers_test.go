package redisstore_test

import (
	"context"
	"crypto/sha256"
	"github.com/ratekit/ratekit/store/storetest"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/memstore"
)

// step is one call in a scripted sequence: advance the clock, then call.
type step struct {
	advance time.Duration
	op      string // "take", "peek" or "reset"
	cost    int64
}

// longSubject is a subject the in-process store holds as its digest, and
// digestSubject a subject equal to that digest's SHA-256: the random
// sequences mix them with a short one, so the stores must keep all three
// apart alike.
var (
	longSubject   = strings.Repeat("long-subject-", 8)
	digestSubject = func() string { s := sha256.Sum256([]byte(longSubject)); return string(s[:]) }()
)

// pair is a memstore and a redisstore on miniredis sharing one fake clock.
type pair struct {
	clock *redistest.Clock
	mem   ratekit.Store
	red   ratekit.Store
}

func newPair(t *testing.T) pair {
	m := miniredis.RunT(t)
	clock := redistest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), m)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return pair{clock: clock, mem: memstore.New(memstore.WithClock(clock.Now)), red: newStore(t, c, "same")}
}

func (p pair) do(t *testing.T, s ratekit.Store, limits []ratekit.Limit, st step, sub string) ratekit.Decision {
	t.Helper()
	ctx := context.Background()
	var d ratekit.Decision
	var err error
	switch st.op {
	case "take":
		d, err = storetest.Take(ctx, s, sub, limits, st.cost)
	case "peek":
		d, err = storetest.Peek(ctx, s, sub, limits)
	case "reset":
		err = storetest.Reset(ctx, s, sub, limits)
	}
	if err != nil {
		t.Fatalf("%s: %v", st.op, err)
	}
	return d
}

// run plays steps on both stores, about the subject "subject", and fails
// on the first difference.
func (p pair) run(t *testing.T, limits []ratekit.Limit, steps []step) []ratekit.Decision {
	return p.runSubjects(t, limits, steps, nil)
}

// runSubjects is run with step i about subjects[i] (all about "subject"
// when subjects is nil).
func (p pair) runSubjects(t *testing.T, limits []ratekit.Limit, steps []step, subjects []string) []ratekit.Decision {
	t.Helper()
	var out []ratekit.Decision
	for i, st := range steps {
		sub := "subject"
		if subjects != nil {
			sub = subjects[i]
		}
		p.clock.Advance(st.advance)
		dm := p.do(t, p.mem, limits, st, sub)
		dr := p.do(t, p.red, limits, st, sub)
		if msg := diff(dm, dr); msg != "" {
			t.Fatalf("step %d %+v about %.20q: memstore and redisstore differ: %s\nmem:   %+v\nredis: %+v", i, st, sub, msg, dm, dr)
		}
		out = append(out, dm)
	}
	return out
}

func diff(a, b ratekit.Decision) string {
	if len(a.States) != len(b.States) {
		return "number of states"
	}
	if a.Allowed != b.Allowed || a.Limit.Spec().ID != b.Limit.Spec().ID || a.Remaining != b.Remaining ||
		a.ResetAfter != b.ResetAfter || a.RetryAfter != b.RetryAfter || a.EffectiveWindow != b.EffectiveWindow || a.Unsatisfiable != b.Unsatisfiable {
		return "decision"
	}
	for i := range a.States {
		x, y := a.States[i], b.States[i]
		x.Limit, y.Limit = ratekit.Limit{}, ratekit.Limit{}
		if x != y {
			return "state of limit " + a.States[i].Limit.Name()
		}
	}
	return ""
}

// TestSameAnswersScripted checks a hand-written sequence against expected
// values, on both stores.
func TestSameAnswersScripted(t *testing.T) {
	const ms = time.Millisecond
	fixed := ratekit.FixedWindow(3, 10*time.Second)
	gcra := ratekit.GCRA(2, time.Second, 2) // one every 500 ms, burst 2
	type want struct {
		allowed   bool
		remaining int64
		reset     time.Duration
		retry     time.Duration
		unsat     bool
	}
	cases := []struct {
		name   string
		limits []ratekit.Limit
		steps  []step
		want   []want
	}{
		{"fixed", []ratekit.Limit{fixed}, []step{
			{0, "peek", 1}, {0, "take", 1}, {1000 * ms, "take", 2}, {1000 * ms, "take", 1},
			{0, "take", 4}, {0, "take", 0}, {7999 * ms, "take", 1}, {1 * ms, "take", 1}, {0, "reset", 0}, {0, "peek", 1},
		}, []want{
			{true, 3, 0, 0, false}, {true, 2, 10 * time.Second, 0, false}, {true, 0, 9 * time.Second, 0, false},
			{false, 0, 8 * time.Second, 8 * time.Second, false}, {false, 0, 8 * time.Second, 0, true},
			{true, 0, 8 * time.Second, 0, false}, {false, 0, 1 * ms, 1 * ms, false}, {true, 2, 10 * time.Second, 0, false},
			{}, {true, 3, 0, 0, false},
		}},
		{"gcra", []ratekit.Limit{gcra}, []step{
			{0, "take", 1}, {0, "take", 1}, {0, "take", 1}, {499 * ms, "take", 1}, {1 * ms, "take", 1}, {0, "take", 3}, {1000 * ms, "peek", 1},
		}, []want{
			{true, 1, 500 * ms, 0, false}, {true, 0, 1000 * ms, 0, false}, {false, 0, 1000 * ms, 500 * ms, false},
			{false, 0, 501 * ms, 1 * ms, false}, {true, 0, 1000 * ms, 0, false}, {false, 0, 1000 * ms, 0, true},
			{true, 2, 0, 0, false},
		}},
		{"multi", []ratekit.Limit{fixed, gcra}, []step{
			{0, "take", 1}, {0, "take", 1}, {0, "take", 1}, {500 * ms, "take", 1}, {500 * ms, "take", 1},
		}, []want{
			{true, 1, 500 * ms, 0, false}, {true, 0, 1000 * ms, 0, false}, {false, 0, 1000 * ms, 500 * ms, false},
			{true, 0, 9500 * ms, 0, false}, // fixed is now at 3 of 3 and binds: its window began at 0
			{false, 0, 9 * time.Second, 9 * time.Second, false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := newPair(t).run(t, tc.limits, tc.steps)
			for i, d := range got {
				if tc.steps[i].op == "reset" {
					continue
				}
				w := tc.want[i]
				g := want{d.Allowed, d.Remaining, d.ResetAfter, d.RetryAfter, d.Unsatisfiable}
				if g != w {
					t.Errorf("step %d %+v: got %+v, want %+v", i, tc.steps[i], g, w)
				}
			}
		})
	}
}

// TestSameAnswersRandom plays 2,000 random steps with millisecond time steps
// on both stores, for each algorithm alone and both together.
func TestSameAnswersRandom(t *testing.T) {
	sets := map[string][]ratekit.Limit{
		"fixed":          {ratekit.FixedWindow(7, 2*time.Second)},
		"gcra":           {ratekit.GCRA(5.5, time.Second, 4)},
		"sliding":        {ratekit.SlidingWindow(9, 3*time.Second)},
		"sliding-coarse": {ratekit.SlidingWindow(9, 3*time.Second).Precision(3 * time.Second)},
		"sliding-fine":   {ratekit.SlidingWindow(12, 2*time.Second).Precision(7 * time.Millisecond / 7 * 5)},
		"log":            {ratekit.SlidingLog(6, 1500*time.Millisecond)},
		"token":          {ratekit.TokenBucket(3, time.Second, 5)},
		"leaky":          {ratekit.LeakyBucket(5, 4, time.Second)},
		"leaky-queue":    {ratekit.LeakyBucket(6, 4, time.Second).Queue(900 * time.Millisecond)},
		"blocks":         {ratekit.FixedWindow(4, time.Second).Block(1500 * time.Millisecond), ratekit.SlidingLog(10, 3*time.Second).Block(700 * time.Millisecond).Named("log")},
		"multi":          {ratekit.FixedWindow(20, 5*time.Second), ratekit.GCRA(3, 700*time.Millisecond, 5), ratekit.SlidingWindow(15, 4*time.Second).Named("sw"), ratekit.SlidingLog(8, 2*time.Second).Named("log")},
	}
	for name, limits := range sets {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			steps, subjects := make([]step, 2000), make([]string, 2000)
			for i := range steps {
				st := step{advance: time.Duration(rng.IntN(400)) * time.Millisecond, op: "take", cost: int64(rng.IntN(4))}
				switch rng.IntN(20) {
				case 0:
					st.op = "peek"
				case 1:
					st.op = "reset"
				case 2:
					st.cost = 10
				}
				steps[i], subjects[i] = st, []string{"subject", longSubject, digestSubject}[rng.IntN(3)]
			}
			newPair(t).runSubjects(t, limits, steps, subjects)
		})
	}
}
