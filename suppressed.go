package ratekit

import (
	"time"

	"github.com/ratekit/ratekit/internal/algo"
)

// Suppressed returns a limit that degrades gracefully instead of cutting off:
// the suppressed strategy of trypema (https://docs.rs/trypema), after Ably's
// distributed rate limiting. It counts every call, admitted or declined, in
// a sliding window of buckets (width window/10, as SlidingWindow's default),
// and decides per call:
//
//   - the calls in the window, this one included, are at most soft: admit;
//   - the admitted calls in the window, this one included, would exceed the
//     hard limit floor(soft × factor): decline (suppression factor 1);
//   - otherwise admit with probability p = (soft / offered) × (soft /
//     admitted), where offered and admitted count the window's calls and
//     admitted calls with this one, scaled up to a whole window when the
//     subject's oldest call in the window is younger than the window. The
//     decision reports the suppression factor max(0, 1 − p).
//
// The first factor keeps the admitted rate at soft however far the offered
// rate grows; the second pulls the window's admitted count toward soft (see
// docs/architecture.md). No window ever admits more than the hard limit.
// Because declined calls count, a client that keeps calling keeps itself
// suppressed; Retry-After is the time until the window's calls drop to
// soft − cost, when a call passes for sure (for a cost above soft, until
// the window is empty). factor must be at least 1.
//
// Stores draw the uniform value (their WithRandom options); one draw per
// call serves all of its Suppressed limits, so a call passes them with the
// probability of the tightest. Peek uses a draw too. A cost above the hard
// limit can never pass and is not counted.
func Suppressed(soft int64, window time.Duration, factor float64) Limit {
	c := newDef(algo.Suppressed, soft, float64(soft), window)
	c.Factor = factor
	c.Precision = algo.DefaultWidth(window)
	return c.limit()
}
