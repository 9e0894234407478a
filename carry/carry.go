// Package carry names what becomes of a limit's counts when its numbers
// change: an override, a redeploy with other numbers, Limiter.Update. A
// limit's state is identified by its name and algorithm (and, for some
// algorithms, its shape: a sliding window's bucket width, a calendar's
// period and zone), never by its numbers, so by default new numbers keep
// the counts.
//
//	ratekit.FixedWindow(100, time.Minute).Named("api")                    // carry.Used
//	ratekit.FixedWindow(100, time.Minute).Named("api").Carry(carry.Reset) // new numbers, fresh counts
package carry

// A Rule is what a limit's state keeps when its numbers change. The zero
// Rule is Used. Rules are plain values, safe to copy and compare.
type Rule uint8

const (
	// Used keeps what was used: a window keeps its count and its end, a
	// sliding window its buckets (of one width: a new Precision, or a new
	// window whose default width changes with it, starts afresh), a log its
	// entries, a bucket (GCRA, token, leaky) the used part of its burst
	// (under a new rate, counted in the new interval, at most the new
	// burst), InFlight its held slots. The new
	// numbers decide from the next call on: a quota raised from 100 to 200
	// after 100 requests admits 100 more in that window; one cut from 100
	// to 50 after 70 admits none until the window ends.
	Used Rule = iota
	// Reset starts fresh state whenever the numbers in force change: a
	// limit's numbers are part of its identity, and an override set,
	// cleared or expired starts its counts from zero.
	Reset
)

// String returns "used" or "reset".
func (r Rule) String() string {
	if r == Reset {
		return "reset"
	}
	return "used"
}
