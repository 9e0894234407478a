package ratekit

import (
	"errors"
	"fmt"

	"github.com/ratekit/ratekit/internal/bounds"
)

// Sentinel errors. Test for them with errors.Is; a *LimitError carries the
// details of an invalid limit.
var (
	// ErrInvalidLimit is matched by every *LimitError and by every error New
	// returns for a configuration it cannot enforce.
	ErrInvalidLimit = errors.New("ratekit: invalid limit")
	// ErrInvalidCost reports a cost below 0 or above 2^53-1.
	ErrInvalidCost = bounds.ErrInvalidCost
	// ErrEmptyKey reports an empty subject key, which is never mapped to a
	// shared bucket: the middleware hands it to the key error policy.
	ErrEmptyKey = errors.New("ratekit: empty key")
)

// LimitError describes why a limit was rejected. It matches ErrInvalidLimit.
// It is a plain value; New returns it (joined with others) for every problem.
type LimitError struct {
	Limit  string // the limit's name
	Field  string // the offending parameter, e.g. "quota" or "window"
	Reason string // what is wrong with it, and how to fix it
}

// Error implements error.
func (e *LimitError) Error() string {
	return fmt.Sprintf("ratekit: invalid limit %q: %s %s", e.Limit, e.Field, e.Reason)
}

// Is reports whether target is ErrInvalidLimit.
func (e *LimitError) Is(target error) bool { return target == ErrInvalidLimit }

// settleError is New's error for a store chain that cannot settle a
// Limiter's charges: it matches ErrInvalidLimit and reads as written.
type settleError struct{ err error }

func (e *settleError) Error() string   { return e.err.Error() }
func (e *settleError) Unwrap() []error { return []error{ErrInvalidLimit, e.err} }
