package ratekit

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// validate reports whether l can be enforced (see limitDef.validate).
func (l Limit) validate() error { return l.def().validate() }

// validate reports whether l can be enforced. The error is a *LimitError
// (matching ErrInvalidLimit) naming the parameter at fault.
func (l *limitDef) validate() error {
	if l.alg == "" {
		return l.invalid("algorithm", "is missing; build limits with a constructor such as ratekit.FixedWindow")
	}
	if err := bounds.Name(l.name); err != "" {
		return l.invalid("name", err)
	}
	if err := l.validateModifiers(); err != nil {
		return err
	}
	switch {
	case l.alg == algFixedWindow:
		if err := l.validateCount("quota", l.quota); err != nil {
			return err
		}
		return l.validateWindow("window", l.period)
	case l.alg == algSlidingWindow:
		return l.validateSliding()
	case l.alg == algSlidingLog:
		if err := l.validateLogCount("quota", "a sliding log"); err != nil {
			return err
		}
		return l.validateWindow("window", l.period)
	case l.alg.bucket():
		return l.validateBucket()
	case l.alg == algSuppressed:
		return l.validateSuppressed()
	case l.alg == algInFlight:
		return l.validateInFlight()
	case bounds.AlgorithmName(string(l.alg)) == "":
		if err := l.validateCount("capacity", l.quota); err != nil {
			return err
		}
		return l.validateWindow("window", l.period)
	default:
		return l.invalid("algorithm", fmt.Sprintf("%q %s", l.alg, bounds.AlgorithmName(string(l.alg))))
	}
}

func (l *limitDef) validateSliding() error {
	if err := l.validateCount("quota", l.quota); err != nil {
		return err
	}
	if err := l.validateWindow("window", l.period); err != nil {
		return err
	}
	if err := l.validateWindow("precision", l.precision); err != nil {
		return err
	}
	switch {
	case l.period%l.precision != 0:
		return l.invalid("precision", fmt.Sprintf("%s must divide the window %s", l.precision, l.period))
	case l.period/l.precision > 1000:
		return l.invalid("precision", fmt.Sprintf("%s makes more than 1000 buckets of the window %s", l.precision, l.period))
	case float64(l.quota)*float64(l.precision.Milliseconds()) >= maxQuota:
		return l.invalid("quota", "× bucket width in ms must stay below 2^53")
	}
	return nil
}

func (l *limitDef) validateBucket() error {
	if math.IsNaN(l.rate) || math.IsInf(l.rate, 0) || l.rate <= 0 {
		return l.invalid("rate", fmt.Sprintf("must be a finite number above 0 (got %v)", l.rate))
	}
	if err := l.validateWindow("period", l.period); err != nil {
		return err
	}
	if err := l.validateCount("burst", l.quota); err != nil {
		return err
	}
	if float64(l.period.Microseconds()) < l.rate {
		return l.invalid("rate", fmt.Sprintf("must be at most one per microsecond (got %v per %s)", l.rate, l.period))
	}
	if horizon := float64(l.interval) * float64(l.quota); horizon > float64(maxWindow) {
		return l.invalid("burst", fmt.Sprintf("× interval must be at most %s (got %d × %s)", maxWindow, l.quota, l.interval))
	}
	return nil
}

// validateModifiers checks Block, Precision and Queue.
func (l *limitDef) validateModifiers() error {
	if l.block != 0 {
		if err := l.validateWindow("block", l.block); err != nil {
			return err
		}
	}
	if l.precision != 0 && l.alg != algSlidingWindow && (l.alg != algSuppressed || l.precision != defaultWidth(l.period)) {
		return l.invalid("precision", "applies only to SlidingWindow")
	}
	if l.factor != 0 && l.alg != algSuppressed {
		return l.invalid("factor", "applies only to Suppressed")
	}
	if l.maxWait != 0 {
		if l.alg != algLeakyBucket {
			return l.invalid("queue", "applies only to LeakyBucket")
		}
		if err := l.validateWindow("queue", l.maxWait); err != nil {
			return err
		}
	}
	if l.params != [3]int64{} && (l.alg.builtin() || l.alg == "") {
		return l.invalid("params", "apply only to custom algorithms")
	}
	for _, p := range l.params {
		if p <= -maxQuota || p >= maxQuota {
			return l.invalid("params", fmt.Sprintf("must stay within ±2^53 (got %d), as Lua numbers do", p))
		}
	}
	return nil
}

// builtin reports whether a is one of the kit's algorithms.
func (a algorithm) builtin() bool { return slices.Contains(bounds.Builtin, string(a)) }

func (l *limitDef) validateCount(field string, n int64) error {
	if n < 1 || n > maxQuota {
		return l.invalid(field, fmt.Sprintf("must be between 1 and 2^53-1 (got %d)", n))
	}
	return nil
}

// validateLogCount checks the quota of a limit that keeps one entry per
// request or slot (SlidingLog, InFlight): 1 to maxLogQuota.
func (l *limitDef) validateLogCount(field, kind string) error {
	if l.quota < 1 || l.quota > maxLogQuota {
		return l.invalid(field, fmt.Sprintf("must be between 1 and %d for %s (got %d)", maxLogQuota, kind, l.quota))
	}
	return nil
}

func (l *limitDef) validateWindow(field string, d time.Duration) error {
	switch {
	case d < minWindow:
		return l.invalid(field, fmt.Sprintf("must be at least %s (got %s)", minWindow, d))
	case d > maxWindow:
		return l.invalid(field, fmt.Sprintf("must be at most %s (got %s)", maxWindow, d))
	case d%time.Millisecond != 0:
		return l.invalid(field, fmt.Sprintf("must be a whole number of milliseconds (got %s)", d))
	}
	return nil
}

func (l *limitDef) invalid(field, reason string) error {
	return &LimitError{Limit: l.name, Field: field, Reason: reason}
}
