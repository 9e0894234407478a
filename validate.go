package ratekit

import (
	"fmt"
	"math"
	"time"
)

const maxNameLen = 48

// Validate reports whether l can be enforced. The error is a *LimitError
// (matching ErrInvalidLimit) naming the parameter at fault.
func (l Limit) Validate() error {
	if l.alg == "" {
		return l.invalid("algorithm", "is missing; build limits with a constructor such as ratekit.FixedWindow")
	}
	if err := validateName(l.name); err != "" {
		return l.invalid("name", err)
	}
	if err := l.validateModifiers(); err != nil {
		return err
	}
	switch {
	case l.alg == AlgFixedWindow:
		if err := l.validateCount("quota", l.quota); err != nil {
			return err
		}
		return l.validateWindow("window", l.period)
	case l.alg == AlgSlidingWindow:
		return l.validateSliding()
	case l.alg == AlgSlidingLog:
		if l.quota > MaxLogQuota {
			return l.invalid("quota", fmt.Sprintf("must be at most %d for a sliding log (got %d)", MaxLogQuota, l.quota))
		}
		if err := l.validateCount("quota", l.quota); err != nil {
			return err
		}
		return l.validateWindow("window", l.period)
	case l.alg.bucket():
		return l.validateBucket()
	case l.alg == AlgSuppressed:
		return l.validateSuppressed()
	case validateAlgorithmName(l.alg) == "":
		if err := l.validateCount("capacity", l.quota); err != nil {
			return err
		}
		return l.validateWindow("window", l.period)
	default:
		return l.invalid("algorithm", fmt.Sprintf("%q %s", l.alg, validateAlgorithmName(l.alg)))
	}
}

func (l Limit) validateSliding() error {
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
	case float64(l.quota)*float64(l.precision.Milliseconds()) >= MaxQuota:
		return l.invalid("quota", "× bucket width in ms must stay below 2^53")
	}
	return nil
}

func (l Limit) validateBucket() error {
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
	if horizon := float64(l.Interval()) * float64(l.quota); horizon > float64(MaxWindow) {
		return l.invalid("burst", fmt.Sprintf("× interval must be at most %s (got %d × %s)", MaxWindow, l.quota, l.Interval()))
	}
	return nil
}

// validateModifiers checks Block, Precision and Queue.
func (l Limit) validateModifiers() error {
	if l.block != 0 {
		if err := l.validateWindow("block", l.block); err != nil {
			return err
		}
	}
	if l.precision != 0 && l.alg != AlgSlidingWindow && (l.alg != AlgSuppressed || l.precision != defaultWidth(l.period)) {
		return l.invalid("precision", "applies only to SlidingWindow")
	}
	if l.factor != 0 && l.alg != AlgSuppressed {
		return l.invalid("factor", "applies only to Suppressed")
	}
	if l.maxWait != 0 {
		if l.alg != AlgLeakyBucket {
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
		if p <= -MaxQuota || p >= MaxQuota {
			return l.invalid("params", fmt.Sprintf("must stay within ±2^53 (got %d), as Lua numbers do", p))
		}
	}
	return nil
}

// builtin reports whether a is one of the kit's algorithms.
func (a Algorithm) builtin() bool {
	return a == AlgFixedWindow || a == AlgSlidingWindow || a == AlgSlidingLog || a.bucket() || a == AlgSuppressed
}

// ValidateAlgorithmName reports whether a can name a custom algorithm: 1 to
// 16 characters from [a-z0-9_], and not one of the kit's algorithms.
func ValidateAlgorithmName(a Algorithm) error {
	if why := validateAlgorithmName(a); why != "" {
		return fmt.Errorf("ratekit: algorithm name %q %s", a, why)
	}
	return nil
}

// validateAlgorithmName returns why a cannot name a custom algorithm, or "".
func validateAlgorithmName(a Algorithm) string {
	if a.builtin() {
		return "is built in"
	}
	if len(a) == 0 || len(a) > 16 {
		return "must be 1 to 16 characters"
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return "may hold only [a-z0-9_]"
		}
	}
	return ""
}

func (l Limit) validateCount(field string, n int64) error {
	if n < 1 || n > MaxQuota {
		return l.invalid(field, fmt.Sprintf("must be between 1 and 2^53-1 (got %d)", n))
	}
	return nil
}

func (l Limit) validateWindow(field string, d time.Duration) error {
	switch {
	case d < MinWindow:
		return l.invalid(field, fmt.Sprintf("must be at least %s (got %s)", MinWindow, d))
	case d > MaxWindow:
		return l.invalid(field, fmt.Sprintf("must be at most %s (got %s)", MaxWindow, d))
	case d%time.Millisecond != 0:
		return l.invalid(field, fmt.Sprintf("must be a whole number of milliseconds (got %s)", d))
	}
	return nil
}

func (l Limit) invalid(field, reason string) error {
	return &LimitError{Limit: l.name, Field: field, Reason: reason}
}

// validateName returns why name is not a valid policy name, or "".
func validateName(name string) string {
	if name == "" || len(name) > maxNameLen {
		return fmt.Sprintf("must be 1 to %d characters (got %d)", maxNameLen, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Sprintf("%q has a character outside [A-Za-z0-9_.-]", name)
		}
	}
	return ""
}

// ValidateCost reports whether cost may be charged: 0 (a peek) up to MaxCost.
func ValidateCost(cost int64) error {
	if cost < 0 || cost > MaxCost {
		return fmt.Errorf("%w: %d is outside 0..2^53-1", ErrInvalidCost, cost)
	}
	return nil
}
