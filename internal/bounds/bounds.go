// Package bounds holds the bounds on the numbers and names of limits and
// calls that every package of the kit checks alike.
package bounds

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidCost is ratekit.ErrInvalidCost.
var ErrInvalidCost = errors.New("ratekit: invalid cost")

// CheckCost returns an error matching ErrInvalidCost unless cost can be
// charged: 0 (a peek) up to MaxCost.
func CheckCost(cost int64) error {
	if cost < 0 || cost > MaxCost {
		return fmt.Errorf("%w: %d is outside 0..2^53-1", ErrInvalidCost, cost)
	}
	return nil
}

// Bounds that keep every stored number exact (below 2^53, in microseconds
// inside Lua) and every header value representable.
const (
	MaxCost     = 1<<53 - 1            // the largest cost one call may charge
	MaxQuota    = 1<<53 - 1            // the largest quota or burst
	MinWindow   = time.Millisecond     // limits have millisecond resolution
	MaxWindow   = 366 * 24 * time.Hour // the longest horizon of any state
	MaxLogQuota = 10_000               // a sliding log keeps one entry per admitted request
	MaxNameLen  = 48
)

// Name returns why name is not a valid policy name, or "".
func Name(name string) string {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Sprintf("must be 1 to %d characters (got %d)", MaxNameLen, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Sprintf("%q has a character outside [A-Za-z0-9_.-]", name)
		}
	}
	return ""
}
