package store

import (
	"errors"
	"fmt"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/internal/bounds"
)

// MaxLogQuota is the largest quota of a SlidingLog: a log keeps one entry
// per admitted request.
const MaxLogQuota = bounds.MaxLogQuota

// CheckLimits reports an error if there are no limits, or if two share an
// ID, which would make a store charge one key twice. ratekit.New rejects such
// limits already; stores call CheckLimits for callers that build their own
// lists.
func CheckLimits(limits []ratekit.Limit) error {
	if len(limits) == 0 {
		return fmt.Errorf("%w: no limits", ratekit.ErrInvalidLimit)
	}
	for i := range limits {
		for j := i + 1; j < len(limits); j++ {
			if limits[i].Spec().ID == limits[j].Spec().ID {
				return &ratekit.LimitError{Limit: limits[i].Name(), Field: "name", Reason: "is used by two limits of one call"}
			}
		}
	}
	return nil
}

// CheckCost reports whether cost may be charged: 0 (a peek) up to 2^53-1.
// Its error matches ratekit.ErrInvalidCost.
func CheckCost(cost int64) error { return bounds.CheckCost(cost) }

// CheckAlgorithmName reports whether name can name a custom algorithm: 1 to
// 16 characters from [a-z0-9_], and not one of the kit's algorithms.
func CheckAlgorithmName(name string) error {
	if why := algo.CustomName(name); why != "" {
		return fmt.Errorf("ratekit: algorithm name %q %s", name, why)
	}
	return nil
}

// DrawBits turns a uniform draw u in [0, 1) into the integer stores pass to
// the suppressed algorithm: floor(u × 2^53), clamped to [0, 2^53 − 1]. In
// the probabilistic regime a call is admitted when DrawBits(u) / 2^53 < p.
// Out-of-range draws (NaN included) are clamped, never a failure.
func DrawBits(u float64) int64 {
	const drawScale = 1 << 53
	switch {
	case u >= 1:
		return drawScale - 1
	case u > 0:
		return int64(u * drawScale)
	}
	return 0
}

// CheckReceipt returns an error unless rc can be a receipt of a call with n
// limits: a Settler's Settle and Renew check it.
func CheckReceipt(rc *ratekit.Receipt, n int) error {
	if rc == nil {
		return errors.New("ratekit: no receipt to settle")
	}
	if len(rc.Ends) != n || len(rc.Held) != n || rc.Cost < 0 {
		return fmt.Errorf("ratekit: a receipt of %d limits and cost %d does not fit a call with %d limits", len(rc.Ends), rc.Cost, n)
	}
	return nil
}
