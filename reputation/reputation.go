package reputation

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// ErrInvalidPolicy is matched by every error of Policy.Validate.
var ErrInvalidPolicy = errors.New("ratekit: invalid reputation policy")

// A Reputation is a tenant's standing: a score in [0, 1], 1 for a tenant the
// store has never seen (or whose state expired), lowered by violations and
// raised by good requests and by quiet time. See Policy for the arithmetic.
// The zero Reputation is that of a tenant without state, except its Score.
type Reputation struct {
	// Score is the tenant's reputation: 1 is a good user, 0 a bot.
	Score float64
	// Violations and Good count the violations and good requests recorded
	// since the state was created.
	Violations, Good int64
	// LastViolation is the store's time of the latest violation, zero if none.
	LastViolation time.Time
	// Updated is the store's time of the latest update, zero for a tenant
	// without state.
	Updated time.Time
	// TTL is how long the state is kept from now without updates; 0 for a
	// tenant without state.
	TTL time.Duration
}

// A Store keeps tenants' reputations. Each method is one atomic update (or
// read) of one tenant under policy p, on the store's own clock;
// implementations validate p, reject an empty tenant with
// ratekit.ErrEmptyKey, and are safe for concurrent use.
// store/storetest.RunReputation checks one against a reference model.
type Store interface {
	// RecordViolation lowers the tenant's score and returns the new state.
	RecordViolation(ctx context.Context, tenant string, p Policy) (Reputation, error)
	// RecordGood raises the tenant's score and returns the new state.
	RecordGood(ctx context.Context, tenant string, p Policy) (Reputation, error)
	// Reputation returns the tenant's current state, time-based recovery
	// included, without changing it.
	Reputation(ctx context.Context, tenant string, p Policy) (Reputation, error)
	// ResetReputation forgets the tenant's state.
	ResetReputation(ctx context.Context, tenant string, p Policy) error
}

// A Policy holds the constants of the reputation arithmetic. Start from
// DefaultPolicy; the zero value is invalid. A store applies, atomically, at
// its own time now:
//
//  1. Time-based recovery, on every update and read: when the score is below
//     1, it rises by HourlyRecovery per hour for the time since the later of
//     the last update and the last violation + Quiet, up to 1.
//  2. A violation: Violations += 1; the impact is
//     Penalty × (1 − ½ × min(Good, Established)/Established) (a tenant with
//     Established good requests takes half the impact), × 1.5 from the 5th
//     violation on, × 2 from the 10th, and × 1.2 when the previous violation
//     was less than 1 s earlier (rapid fire); the score drops by the impact,
//     to no less than 0.
//  3. A good request: Good += 1; the score rises by GoodStep when the tenant
//     has no violations, else by SlowStep / Violations, up to 1.
//  4. The state's TTL follows the new score: 4 h below 0.1, 2 h below 0.3, 1 h
//     below 0.7, else 30 min; doubled from 10 violations on. When it expires
//     the tenant starts again at 1.
//
// Time is kept in whole microseconds. The fields but Name are fingerprinted
// into the storage key (ID), so changing them starts fresh state.
type Policy struct {
	// Name is part of the storage key (default "reputation"); 1 to 48
	// characters from [A-Za-z0-9_.-].
	Name string
	// Penalty is the base impact of one violation, in (0, 1] (default 0.1).
	Penalty float64
	// Established is the number of good requests at which a violation's
	// impact is halved (default 100).
	Established int64
	// GoodStep is the recovery per good request while the tenant has no
	// violations, in [0, 1] (default 0.02).
	GoodStep float64
	// SlowStep is the recovery per good request of a tenant with violations,
	// divided by the number of violations, in [0, 1] (default 0.005).
	SlowStep float64
	// HourlyRecovery is the time-based recovery per hour, in [0, 1] (default
	// 0.05).
	HourlyRecovery float64
	// Quiet is how long after a violation time-based recovery starts (default
	// 10 minutes); whole milliseconds, 0 to MaxWindow.
	Quiet time.Duration
}

// DefaultPolicy returns the policy of each field's default.
func DefaultPolicy() Policy {
	return Policy{
		Name:           "reputation",
		Penalty:        0.1,
		Established:    100,
		GoodStep:       0.02,
		SlowStep:       0.005,
		HourlyRecovery: 0.05,
		Quiet:          10 * time.Minute,
	}
}

// Validate reports whether p can be applied. Its errors match
// ErrInvalidPolicy.
func (p Policy) Validate() error {
	if why := bounds.Name(p.Name); why != "" {
		return fmt.Errorf("%w: name %s", ErrInvalidPolicy, why)
	}
	if !(p.Penalty > 0 && p.Penalty <= 1) {
		return fmt.Errorf("%w: penalty must be in (0, 1] (got %v)", ErrInvalidPolicy, p.Penalty)
	}
	if p.Established < 1 || p.Established > bounds.MaxQuota {
		return fmt.Errorf("%w: established must be between 1 and 2^53-1 (got %d)", ErrInvalidPolicy, p.Established)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"good step", p.GoodStep}, {"slow step", p.SlowStep}, {"hourly recovery", p.HourlyRecovery}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("%w: %s must be in [0, 1] (got %v)", ErrInvalidPolicy, f.name, f.v)
		}
	}
	if p.Quiet < 0 || p.Quiet > bounds.MaxWindow || p.Quiet%time.Millisecond != 0 {
		return fmt.Errorf("%w: quiet must be whole milliseconds from 0 to %s (got %s)", ErrInvalidPolicy, bounds.MaxWindow, p.Quiet)
	}
	return nil
}

// ID returns the policy's storage identity, name:reputation:fingerprint
// (floats in their shortest decimal form, as %v writes them).
func (p Policy) ID() string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%v|%d|%v|%v|%v|%d", p.Penalty, p.Established, p.GoodStep, p.SlowStep, p.HourlyRecovery, p.Quiet)
	return fmt.Sprintf("%s:reputation:%016x", p.Name, h.Sum64())
}

// TTL returns how long a tenant's state is kept after an update
// that leaves it at score with violations violations (see Policy).
func TTL(score float64, violations int64) time.Duration {
	ttl := 30 * time.Minute
	switch {
	case score < 0.1:
		ttl = 4 * time.Hour
	case score < 0.3:
		ttl = 2 * time.Hour
	case score < 0.7:
		ttl = time.Hour
	}
	if violations >= 10 {
		ttl *= 2
	}
	return ttl
}
