package lockout

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// GrowingDelays returns windows that answer failures with growing waits
// instead of a block: free attempts pass at once, then the k-th attempt
// after them passes first·2^(k-1) after the first attempt (1 s, 2 s, 4 s,
// … for first 1 s: waits of 1 s, 1 s, 2 s, 4 s, …), until the waits reach
// max; from then on the last window paces attempts (free plus one per
// doubling in any span of max: 15 per 15 minutes for 5, 1s, 15m). Use them
// as a Config's Windows, beside a long window that bounds the failures a day
// (e.g. 100 in 24 hours), so that an account under attack slows down without
// a fixed lock. Retry-After is exact: window i holds free+i-1 attempts in
// first·2^(i-1) (the last one: in max), with no block. free is 1 to 1000;
// first and max whole milliseconds, first at least 1ms, max longer than
// first and at most 8784h.
func GrowingDelays(free int64, first, max time.Duration) ([]Window, error) {
	switch {
	case free < 1 || free > 1000:
		return nil, fmt.Errorf("ratekit: GrowingDelays(%d, %s, %s): free must be 1 to 1000", free, first, max)
	case first < bounds.MinWindow || first%time.Millisecond != 0:
		return nil, fmt.Errorf("ratekit: GrowingDelays(%d, %s, %s): first must be whole milliseconds, at least 1ms", free, first, max)
	case max <= first || max > bounds.MaxWindow || max%time.Millisecond != 0:
		return nil, fmt.Errorf("ratekit: GrowingDelays(%d, %s, %s): max must be whole milliseconds, longer than first and at most %s", free, first, max, bounds.MaxWindow)
	}
	var ws []Window
	for i, d := int64(1), first; ; i, d = i+1, 2*d {
		if d >= max {
			d = max
		}
		ws = append(ws, Window{Scope: "delay-" + strconv.FormatInt(i, 10), Attempts: free + i - 1, Window: d})
		if d == max {
			return ws, nil
		}
	}
}
