package ratekit

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test for them with errors.Is; a *LimitError carries the
// details of an invalid limit.
var (
	// ErrInvalidLimit is matched by every *LimitError.
	ErrInvalidLimit = errors.New("ratekit: invalid limit")
	// ErrInvalidCost reports a cost below 0 or at or above MaxCost.
	ErrInvalidCost = errors.New("ratekit: invalid cost")
	// ErrEmptyKey reports an empty subject key. An empty key is never
	// mapped to a shared bucket; the middleware hands it to the error policy.
	ErrEmptyKey = errors.New("ratekit: empty key")
	// ErrNoLimits reports a Limiter built without limits.
	ErrNoLimits = errors.New("ratekit: no limits")
	// ErrNilStore reports a Limiter built without a store.
	ErrNilStore = errors.New("ratekit: nil store")
)

// LimitError describes why a limit was rejected. It matches ErrInvalidLimit.
type LimitError struct {
	Limit  string // the limit's name
	Field  string // the offending parameter, e.g. "quota" or "window"
	Reason string // what is wrong with it
}

// Error implements error.
func (e *LimitError) Error() string {
	return fmt.Sprintf("ratekit: invalid limit %q: %s %s", e.Limit, e.Field, e.Reason)
}

// Is reports whether target is ErrInvalidLimit.
func (e *LimitError) Is(target error) bool { return target == ErrInvalidLimit }
