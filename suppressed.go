package ratekit

import (
	"fmt"
	"math"
	"time"
)

// AlgSuppressed is trypema's suppressed strategy: probabilistic admission
// between a soft and a hard limit, counting every call.
const AlgSuppressed Algorithm = "suppressed"

// drawScale is 2^53: a draw is an integer k in [0, 2^53), the uniform value
// k / 2^53.
const drawScale = 1 << 53

// Suppressed returns a limit that degrades gracefully instead of cutting off
// (trypema's suppressed strategy, after Ably's distributed rate limiting). It
// counts every call, admitted or declined, in a sliding window of buckets
// (width window/10, as SlidingWindow's default), and decides per call:
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
// The first factor is trypema's: it admits the soft share of the offered
// rate, so the admitted rate tracks soft however far the offered rate grows.
// The second is a feedback that pulls the window's admitted count toward
// soft: it halves the noise of the admitted rate and the overshoot of a
// subject's first window (where up to soft calls pass before suppression
// starts). No window ever admits more than the hard limit. Because declined
// calls count, a client that keeps calling keeps itself suppressed;
// Retry-After is the time until the window's calls drop to soft − cost, when
// a call passes for sure (for a cost above soft, until the window is empty).
// factor must be at least 1.
//
// Stores draw the uniform value (redisstore.WithRandom, memstore.WithRandom);
// one draw per call serves all of its Suppressed limits, so a call passes
// them with the probability of the tightest. Peek uses a draw too. A cost
// above the hard limit can never pass and is not counted.
func Suppressed(soft int64, window time.Duration, factor float64) Limit {
	l := newLimit(AlgSuppressed, soft, float64(soft), window)
	l.factor = factor
	l.precision = defaultWidth(window)
	return l.withID()
}

// Factor returns a Suppressed limit's hard-limit factor, or 0.
func (l Limit) Factor() float64 { return l.factor }

// Hard returns a Suppressed limit's hard limit, floor(soft × factor), or 0.
func (l Limit) Hard() int64 {
	if l.alg != AlgSuppressed {
		return 0
	}
	h := math.Floor(float64(l.quota) * l.factor)
	if !(h < MaxQuota+1) { // also NaN
		return MaxQuota + 1
	}
	return int64(h)
}

func (l Limit) validateSuppressed() error {
	if err := l.validateCount("soft limit", l.quota); err != nil {
		return err
	}
	if err := l.validateWindow("window", l.period); err != nil {
		return err
	}
	if math.IsNaN(l.factor) || math.IsInf(l.factor, 0) || l.factor < 1 {
		return l.invalid("factor", fmt.Sprintf("must be a finite number of at least 1 (got %v)", l.factor))
	}
	if h := l.Hard(); float64(h)*float64(l.precision.Milliseconds()) >= MaxQuota {
		return l.invalid("factor", fmt.Sprintf("makes a hard limit (%d) × bucket width in ms at or above 2^53", h))
	}
	return nil
}

// DrawBits turns a uniform draw u in [0, 1) into the integer stores pass to
// the suppressed algorithm: floor(u × 2^53), clamped to [0, 2^53 − 1]. In
// the probabilistic regime a call is admitted when DrawBits(u) / 2^53 < p.
// Out-of-range draws (NaN included) are clamped, never a failure.
func DrawBits(u float64) int64 {
	switch {
	case u >= 1:
		return drawScale - 1
	case u > 0:
		return int64(u * drawScale)
	}
	return 0
}
