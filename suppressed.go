package ratekit

import (
	"time"

	"github.com/ratekit/ratekit/internal/algo"
)

// Suppressed returns a limit that degrades gracefully instead of cutting off:
// the suppressed strategy of trypema (https://docs.rs/trypema). It counts
// every call, admitted or declined, in a sliding window of buckets (width
// window/10), and decides per call, this one included:
//
//   - the window's calls are at most soft: admit;
//   - its admitted calls would exceed the hard limit floor(soft × factor):
//     decline (suppression factor 1);
//   - otherwise admit with probability p = (soft / offered) × (soft /
//     admitted), counted as in docs/architecture.md, and report the
//     suppression factor max(0, 1 − p).
//
// Because declined calls count, a client that keeps calling keeps itself
// suppressed; Retry-After is the time until the window's calls drop to
// soft − cost, when a call passes for sure (for a cost above soft, until
// the window is empty). factor must be at least 1. Stores draw the uniform
// value (their WithRandom options), one per call for all of its Suppressed
// limits, Peek included. A cost above the hard limit can never pass and is
// not counted.
func Suppressed(soft int64, window time.Duration, factor float64) Limit {
	c := newDef(algo.Suppressed, soft, float64(soft), window)
	c.Factor = factor
	c.Precision = algo.DefaultWidth(window)
	return c.limit()
}
