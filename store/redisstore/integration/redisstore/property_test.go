package redisstore_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// admitted is one allowed request: when (µs from the start) and its cost.
type admitted struct{ at, cost int64 }

// model decides as a limit should, from first principles; nil means the
// algorithm is checked by its invariant only.
type model interface {
	allow(at, cost int64) bool
}

// logModel: exact count of admitted cost in (at - window, at].
type logModel struct {
	quota, window int64
	log           []admitted
}

func (m *logModel) allow(at, cost int64) bool {
	n := int64(0)
	for _, a := range m.log {
		if a.at > at-m.window {
			n += a.cost
		}
	}
	if n+cost > m.quota {
		return false
	}
	if cost > 0 {
		m.log = append(m.log, admitted{at, cost})
	}
	return true
}

// fixedModel: a window of window ms opens at the first request after the
// last one closed (closing at its start + window, in whole ms).
type fixedModel struct {
	quota, window, start, count int64
	open                        bool
}

func (m *fixedModel) allow(at, cost int64) bool {
	ms := at / 1000
	if m.open && ms >= m.start+m.window {
		m.open = false
	}
	count := int64(0)
	if m.open {
		count = m.count
	}
	if count+cost > m.quota {
		return false
	}
	if cost > 0 {
		if !m.open {
			m.open, m.start, m.count = true, ms, 0
		}
		m.count += cost
	}
	return true
}

// tatModel: the bucket algorithms; the bucket is full again at tat.
type tatModel struct {
	interval, burst, tat int64
}

func (m *tatModel) allow(at, cost int64) bool {
	tat := max(m.tat, at)
	if tat+m.interval*cost-at > m.interval*m.burst {
		return false
	}
	if cost > 0 {
		m.tat = tat + m.interval*cost
	}
	return true
}

// TestWindowInvariants plays random arrivals, costs and 1 ms time steps on
// memstore and redisstore (miniredis) on one fake clock. Both must agree on
// every decision (pair.run checks it), match the reference model where there
// is one, and keep the algorithm's invariant over what they admitted.
func TestWindowInvariants(t *testing.T) {
	const W, Q = int64(1_000_000), int64(10) // 1 s in µs, quota 10
	cases := []struct {
		limit     ratekit.Limit
		model     model
		invariant func(t *testing.T, adm []admitted)
	}{
		{ratekit.SlidingLog(Q, time.Second), &logModel{quota: Q, window: W}, maxIn(W, Q)},
		{ratekit.FixedWindow(Q, time.Second), &fixedModel{quota: Q, window: 1000}, maxIn(W, 2*Q)},
		{ratekit.GCRA(float64(Q), time.Second, 4), &tatModel{interval: W / Q, burst: 4}, bucketBound(W/Q, 4)},
		{ratekit.TokenBucket(float64(Q), time.Second, 4), &tatModel{interval: W / Q, burst: 4}, bucketBound(W/Q, 4)},
		{ratekit.LeakyBucket(4, float64(Q), time.Second), &tatModel{interval: W / Q, burst: 4}, bucketBound(W/Q, 4)},
		{ratekit.SlidingWindow(Q, time.Second), nil, fullBuckets(W, 100_000, Q)},
		{ratekit.SlidingWindow(Q, time.Second).Precision(time.Second), nil, fullBuckets(W, W, Q)},
	}
	for _, tc := range cases {
		t.Run(tc.limit.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(tc.limit.Spec().Quota)))
			steps := make([]step, 1500)
			for i := range steps {
				gap := rng.IntN(60) // mostly bursts, now and then a pause
				if rng.IntN(10) == 0 {
					gap = rng.IntN(1500)
				}
				steps[i] = step{advance: time.Duration(gap) * time.Millisecond, op: "take", cost: int64(rng.IntN(4))}
			}
			decisions := newPair(t).run(t, []ratekit.Limit{tc.limit}, steps)
			var at int64
			var adm []admitted
			for i, d := range decisions {
				at += steps[i].advance.Microseconds()
				if tc.model != nil && tc.model.allow(at, steps[i].cost) != d.Allowed {
					t.Fatalf("step %d at %dµs cost %d: stores say allowed=%v, the model says otherwise", i, at, steps[i].cost, d.Allowed)
				}
				if d.Allowed && steps[i].cost > 0 {
					adm = append(adm, admitted{at, steps[i].cost})
				}
			}
			if len(adm) < 100 {
				t.Fatalf("only %d admissions: the sequence does not exercise the limit", len(adm))
			}
			tc.invariant(t, adm)
		})
	}
}

// maxIn: any interval (t - w, t] holds at most n admitted cost.
func maxIn(w, n int64) func(*testing.T, []admitted) {
	return func(t *testing.T, adm []admitted) {
		for i, a := range adm {
			sum := int64(0)
			for _, b := range adm[:i+1] {
				if b.at > a.at-w {
					sum += b.cost
				}
			}
			if sum > n {
				t.Fatalf("%d admitted in the %dµs up to %dµs, want at most %d", sum, w, a.at, n)
			}
		}
	}
}

// bucketBound: from any admission i to any later j, admitted cost is at most
// burst + (t_j - t_i) / interval.
func bucketBound(interval, burst int64) func(*testing.T, []admitted) {
	return func(t *testing.T, adm []admitted) {
		for i := range adm {
			sum := int64(0)
			for j := i; j < len(adm); j++ {
				sum += adm[j].cost
				if limit := burst + (adm[j].at-adm[i].at)/interval; sum > limit {
					t.Fatalf("%d admitted from %dµs to %dµs, want at most %d", sum, adm[i].at, adm[j].at, limit)
				}
			}
		}
	}
}

// fullBuckets: the sliding window's guarantee: at each admission, the cost
// admitted in the buckets wholly inside the window, [bucket after the one
// holding t - w, t], is at most quota.
func fullBuckets(w, width, quota int64) func(*testing.T, []admitted) {
	return func(t *testing.T, adm []admitted) {
		for i, a := range adm {
			from := ((a.at/1000-w/1000)/(width/1000) + 1) * width
			sum := int64(0)
			for _, b := range adm[:i+1] {
				if b.at >= from {
					sum += b.cost
				}
			}
			if sum > quota {
				t.Fatalf("%d admitted in whole buckets since %dµs at %dµs, want at most %d", sum, from, a.at, quota)
			}
		}
	}
}
