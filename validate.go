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
	switch l.alg {
	case AlgFixedWindow:
		if err := l.validateCount("quota", l.quota); err != nil {
			return err
		}
		return l.validateWindow("window", l.period)
	case AlgGCRA:
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
	default:
		return l.invalid("algorithm", fmt.Sprintf("%q is unknown", l.alg))
	}
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
