package storetest

import (
	"math"
	"testing"
	"time"

	"github.com/ratekit/ratekit/reputation"
)

// repSteps checks documented values one by one, and the model with them.
func repSteps(t *testing.T, h ReputationHarness) {
	type step struct {
		advance time.Duration
		op      string
		score   float64
		ttl     time.Duration
	}
	const s2 = 2 * time.Second
	recovered := 0.05 * 1804 / 3600 // 30m04s after the quiet period
	tables := []struct {
		name    string
		penalty float64
		goods   int // good requests first
		steps   []step
	}{
		{"established", 0.1, 20, []step{ // 20 good requests: impact 0.1 × (1 − ½ × 20/100) = 0.09
			{s2, "violation", 0.91, 30 * time.Minute},
			{500 * time.Millisecond, "violation", 0.802, 30 * time.Minute}, // rapid fire: × 1.2
			{s2, "violation", 0.712, 30 * time.Minute},
			{s2, "violation", 0.622, time.Hour}, // below 0.7
			{s2, "violation", 0.487, time.Hour}, // the 5th: × 1.5
			{s2, "good", 0.488, time.Hour},      // slow: 0.005 / 5 violations
			{s2, "get", 0.488, time.Hour - s2},
			{9 * time.Minute, "get", 0.488, time.Hour - s2 - 9*time.Minute},               // quiet: 10 min after the violation
			{31 * time.Minute, "get", 0.488 + recovered, 19*time.Minute + 58*time.Second}, // 5% per hour
			{0, "good", 0.489 + recovered, time.Hour},
			{2 * time.Hour, "get", 1, 0}, // expired
		}},
		{"escalation", 0.05, 0, []step{
			{s2, "violation", 0.95, 30 * time.Minute},
			{s2, "violation", 0.90, 30 * time.Minute},
			{s2, "violation", 0.85, 30 * time.Minute},
			{s2, "violation", 0.80, 30 * time.Minute},
			{s2, "violation", 0.725, 30 * time.Minute}, // × 1.5
			{s2, "violation", 0.65, time.Hour},
			{s2, "violation", 0.575, time.Hour},
			{s2, "violation", 0.50, time.Hour},
			{s2, "violation", 0.425, time.Hour},
			{s2, "violation", 0.325, 2 * time.Hour},                     // the 10th: × 2, TTL doubled
			{500 * time.Millisecond, "violation", 0.205, 4 * time.Hour}, // × 2 × 1.2; below 0.3: 2 h, doubled
			{s2, "violation", 0.105, 4 * time.Hour},
			{s2, "violation", 0.005, 8 * time.Hour}, // below 0.1: 4 h, doubled
			{s2, "violation", 0, 8 * time.Hour},     // never below 0
			{s2, "good", 0.005 / 14, 8 * time.Hour}, // slow: 0.005 / 14 violations
		}},
	}
	for _, tb := range tables {
		t.Run(tb.name, func(t *testing.T) {
			p := reputation.DefaultPolicy()
			p.Penalty = tb.penalty
			m := newRepModel(p)
			for range tb.goods {
				h.Advance(100 * time.Millisecond)
				m.good(h.Now().UnixMicro())
				h.call(t, tb.name, p, "good")
			}
			for i, s := range tb.steps {
				h.Advance(s.advance)
				now := h.Now().UnixMicro()
				got := h.call(t, tb.name, p, s.op)
				var want reputation.Reputation
				switch s.op {
				case "violation":
					want = m.violation(now)
				case "good":
					want = m.good(now)
				default:
					want = m.get(now)
				}
				if math.Abs(got.Score-s.score) > scoreTolerance || got.TTL != s.ttl {
					t.Fatalf("step %d (%s after %s): score %v ttl %v, want %v and %v", i, s.op, s.advance, got.Score, got.TTL, s.score, s.ttl)
				}
				if what := sameReputation(got, want); what != "" {
					t.Fatalf("step %d: %s differs from the model\nstore: %+v\nmodel: %+v", i, what, got, want)
				}
			}
		})
	}
}
