package lockout

import (
	"strconv"
	"time"
)

// GrowingDelays returns windows that answer failures with delays that
// double instead of a block: free attempts pass at once, then each further
// attempt waits twice as long as the one before, starting at first, until
// the waits reach max; from then on the last window paces attempts (free
// plus one per doubling in any span of max: 15 per 15 minutes for 5, 1s,
// 15m). Use them as a Config's Windows, beside a long window that bounds
// the failures a day (e.g. 100 in 24 hours), so that an account under
// attack slows down without its owner being locked out. Retry-After is
// exact: window i holds free+i-1 attempts in first·2^(i-1) (the last one:
// in max), with no block. Values New refuses (free 1 to 10000, first at
// least 1ms, max from first to 366 days) are refused through the windows.
func GrowingDelays(free int64, first, max time.Duration) []Window {
	var ws []Window
	for i, d := int64(1), first; i <= 64; i, d = i+1, 2*d {
		if d <= 0 || d >= max || i == 64 { // the last window (no overflow, at most 64)
			d = max
		}
		ws = append(ws, Window{Scope: "delay-" + strconv.FormatInt(i, 10), Attempts: free + i - 1, Window: d})
		if d == max {
			return ws
		}
	}
	return ws
}
