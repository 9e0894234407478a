package redisstore_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

// newSeededPair is newPair with both stores drawing from their own copy of
// one seeded random sequence: given the same calls they draw alike.
func newSeededPair(t *testing.T, seed uint64) pair {
	return newDrawPair(t, rand.New(rand.NewPCG(seed, seed)).Float64, rand.New(rand.NewPCG(seed, seed)).Float64)
}

// newDrawPair is newPair with the given sources of draws.
func newDrawPair(t *testing.T, memDraw, redDraw func() float64) pair {
	m := miniredis.RunT(t)
	clock := redistest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), m)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return pair{
		clock: clock,
		mem:   memstore.New(memstore.WithClock(clock.Now), memstore.WithRandom(memDraw)),
		red:   newStore(t, c, "supp", redisstore.WithRandom(redDraw)),
	}
}

// offer sends one call every gap for d on both stores of p (which must give
// identical answers) and returns each call's admission.
func offer(t *testing.T, p pair, l ratekit.Limit, gap, d time.Duration) []bool {
	t.Helper()
	steps := make([]step, int(d/gap))
	for i := range steps {
		steps[i] = step{advance: gap, op: "take", cost: 1}
	}
	decisions := p.run(t, []ratekit.Limit{l}, steps)
	admitted := make([]bool, len(decisions))
	for i, dec := range decisions {
		admitted[i] = dec.Allowed
	}
	return admitted
}

func count(b []bool) (n int) {
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// TestSuppressedTracksSoftLimit: 200 calls per second against a soft limit
// of 100 per second for 10 s on a fake clock. The admitted rate stays within
// 5% of the soft limit, over the 10 s and over seconds 2 to 10; the first
// second, where the soft limit passes before suppression starts, admits at
// most 1.5 × soft; both stores decide every call alike. (Over 100 seeds on
// memstore: 99.1 to 105.9 per second over 10 s, median 102.7.)
func TestSuppressedTracksSoftLimit(t *testing.T) {
	l := ratekit.Suppressed(100, time.Second, 2)
	for _, seed := range []uint64{1, 2, 3} {
		admitted := offer(t, newSeededPair(t, seed), l, 5*time.Millisecond, 10*time.Second)
		total := count(admitted)
		first, rest := count(admitted[:200]), count(admitted[200:])
		t.Logf("seed %d: %d of %d admitted in 10 s (%.1f/s); first second %d, then %.1f/s", seed, total, len(admitted), float64(total)/10, first, float64(rest)/9)
		if rate := float64(total) / 10; math.Abs(rate-100) > 5 {
			t.Errorf("seed %d: admitted %.1f/s, want within 5%% of 100/s", seed, rate)
		}
		if steady := float64(rest) / 9; math.Abs(steady-100) > 5 || first > 150 {
			t.Errorf("seed %d: %d admitted in the first second, then %.1f/s; want at most 150, then within 5%% of 100/s", seed, first, steady)
		}
		// no window of 10 buckets (1 s, aligned) ever admits more than the hard limit
		for end := 200; end <= len(admitted); end += 20 {
			if n := count(admitted[end-200 : end]); n > 200 {
				t.Fatalf("seed %d: %d admitted in the second before call %d, hard limit 200", seed, n, end)
			}
		}
	}
}

// TestSuppressedHardLimit: far above the hard limit nothing is admitted
// beyond it, whatever the draws. With every draw admitting (0), a burst of
// 1,000 calls admits exactly the hard limit; 1,000 calls per second for 5 s
// (10× the soft limit) never admit more than the hard limit in any aligned
// second, and about the soft limit on average.
func TestSuppressedHardLimit(t *testing.T) {
	l := ratekit.Suppressed(100, time.Second, 1.5) // hard 150
	zero := func() float64 { return 0 }
	burst := make([]step, 1000)
	for i := range burst {
		burst[i] = step{op: "take", cost: 1}
	}
	n := 0
	for _, d := range newDrawPair(t, zero, zero).run(t, []ratekit.Limit{l}, burst) {
		if d.Allowed {
			n++
		} else if d.Suppression != 1 {
			t.Fatalf("a call declined with draw 0 has factor %v; only the hard limit may decline it", d.Suppression)
		}
	}
	if n != 150 {
		t.Fatalf("burst of 1,000 with every draw admitting: %d admitted, want exactly the hard limit, 150", n)
	}
	admitted := offer(t, newSeededPair(t, 9), l, time.Millisecond, 5*time.Second)
	for end := 1000; end <= len(admitted); end += 100 {
		if n := count(admitted[end-1000 : end]); n > 150 {
			t.Fatalf("%d admitted in the second before call %d, want at most 150", n, end)
		}
	}
	total := count(admitted)
	t.Logf("10× the soft limit: %d admitted in 5 s, %d in the first second", total, count(admitted[:1000]))
	if total < 450 || total > 600 {
		t.Fatalf("%d admitted in 5 s at 10× the soft limit, want about 100/s after the first second's 150", total)
	}
}

// TestSuppressedScripted checks the documented arithmetic value by value on
// both stores: soft 10 per second (buckets of 100 ms), hard 20, every draw
// declining (Never).
func TestSuppressedScripted(t *testing.T) {
	const ms = time.Millisecond
	never := func() float64 { return 1 - 0x1p-53 }
	l := []ratekit.Limit{ratekit.Suppressed(10, time.Second, 2)}
	p := newDrawPair(t, never, never)
	takes := func(n int) []step {
		s := make([]step, n)
		for i := range s {
			s[i] = step{op: "take", cost: 1}
		}
		return s
	}
	for i, d := range p.run(t, l, takes(10)) {
		if !d.Allowed || d.Suppression != 0 || d.Remaining != int64(9-i) {
			t.Fatalf("call %d under the soft limit: %+v", i, d)
		}
	}
	// the 11th at the same instant: 11 offered and 11 admitted (with it) over
	// a span clamped to one bucket: p = ((10·100·100) / ((10·100 + 100)·1000))²
	d := p.run(t, l, takes(1))[0]
	p1 := float64(10*100) * float64(100) / (float64(1100) * float64(1000))
	want := 1 - p1*p1
	if d.Allowed || d.Suppression != want || d.RetryAfter != 1019*ms || d.ResetAfter != 1100*ms {
		t.Fatalf("11th call: %+v, want declined, factor %v, retry 1.019s (11 calls of the bucket weighed down to 9), reset 1.1s", d, want)
	}
	// Retry-After is when the window's calls leave room for one more, so a
	// call passes whatever the draw (Remaining counts such calls); before,
	// the draw decides, and peeks do not count
	dec := p.run(t, l, []step{{advance: 1018 * ms, op: "peek"}, {advance: ms, op: "peek"}, {op: "take", cost: 1}})
	if dec[0].Remaining != 0 || dec[1].Remaining != 1 || !dec[1].Allowed || dec[1].Suppression != 0 || !dec[2].Allowed {
		t.Fatalf("1 ms before and at Retry-After: %+v\n%+v\n%+v", dec[0], dec[1], dec[2])
	}
	// a subject half a window old is seen at its rate over that half
	q := newDrawPair(t, never, never)
	q.run(t, l, takes(10))
	d = q.run(t, l, []step{{advance: 500 * ms, op: "take", cost: 1}})[0]
	p1 = float64(10*100) * float64(500) / (float64(1100) * float64(1000))
	if want := 1 - p1*p1; d.Allowed || d.Suppression != want {
		t.Fatalf("11th call after 500 ms: %+v, want factor %v", d, want)
	}
}

// TestSuppressedSameAnswersRandom plays 2,000 random steps (costs 0 to 3 and
// 25, peeks, resets) on both stores with one seeded sequence of draws, for a
// Suppressed limit alone, with a block, beside other limits, and two at once.
func TestSuppressedSameAnswersRandom(t *testing.T) {
	sets := map[string][]ratekit.Limit{
		"alone":      {ratekit.Suppressed(8, 2*time.Second, 2)},
		"odd-window": {ratekit.Suppressed(5, 1234*time.Millisecond, 1.7)},
		"block":      {ratekit.Suppressed(6, time.Second, 1.5).Block(1500 * time.Millisecond)},
		"multi":      {ratekit.Suppressed(10, 3*time.Second, 1.5), ratekit.FixedWindow(12, 2*time.Second), ratekit.GCRA(4, time.Second, 3)},
		"two":        {ratekit.Suppressed(4, time.Second, 3), ratekit.Suppressed(9, 5*time.Second, 1.2).Named("long")},
	}
	for name, limits := range sets {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(name))))
			steps := make([]step, 2000)
			for i := range steps {
				st := step{advance: time.Duration(rng.IntN(150)) * time.Millisecond, op: "take", cost: int64(rng.IntN(4))}
				switch rng.IntN(25) {
				case 0:
					st.op = "peek"
				case 1:
					st.op = "reset"
				case 2:
					st.cost = 25 // above every hard limit
				}
				steps[i] = st
			}
			decisions := newSeededPair(t, 17).run(t, limits, steps)
			var admitted, suppressed, blocked int
			for _, d := range decisions {
				if d.Allowed {
					admitted++
				}
				if d.Suppression > 0 && d.Suppression < 1 {
					suppressed++
				}
				if d.Blocked {
					blocked++
				}
			}
			if admitted == 0 || suppressed == 0 || strings.HasPrefix(name, "block") && blocked == 0 {
				t.Fatalf("%d admitted, %d in the probabilistic range, %d blocked: the steps do not exercise the algorithm", admitted, suppressed, blocked)
			}
		})
	}
}
