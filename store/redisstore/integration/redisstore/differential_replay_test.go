package redisstore_test

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
)

const ms = time.Millisecond

// differentialReplays are sequences the differential test plays as given,
// from their start: the smallest replays of divergences found and fixed,
// and any failing random sequence pasted from the test's output. Any
// mismatch fails.
var differentialReplays = []struct {
	name  string
	start time.Time
	sets  [][]ratekit.Limit
	ops   []dop
}{
	{"fixed window at PTTL 0 admits into a window that ends at once", diffStart,
		[][]ratekit.Limit{{ratekit.FixedWindow(2, 5*ms)}},
		[]dop{{kind: opTake, cost: 1}, {adv: 5 * ms, kind: opTake, cost: 1}}},
	{"fixed window at PTTL 0 denies with RetryAfter 0", diffStart,
		[][]ratekit.Limit{{ratekit.FixedWindow(1, 5*ms)}},
		[]dop{{kind: opTake, cost: 1}, {adv: 5 * ms, kind: opTake, cost: 1}}},
	{"fixed window at PTTL 0 in Reserve", diffStart,
		[][]ratekit.Limit{{ratekit.FixedWindow(3, 5*ms), ratekit.GCRA(1, 5*ms, 1)}},
		[]dop{{kind: opReserve, cost: 1}, {adv: 5 * ms, kind: opReserve, cost: 1}}},
	{"a charge after a refund emptied a fixed window", diffStart,
		[][]ratekit.Limit{{ratekit.FixedWindow(3, 10*ms)}},
		[]dop{{kind: opReserve, cost: 2}, {adv: 4 * ms, kind: opSettle, cost: 0, rc: 0}, {kind: opTake, cost: 1}}},
	{"another limit denies after a refund emptied a fixed window", diffStart,
		[][]ratekit.Limit{
			{ratekit.FixedWindow(3, 10*ms), ratekit.SlidingLog(1, 10*ms)},
			{ratekit.FixedWindow(3, 10*ms)},
			{ratekit.SlidingLog(1, 10*ms)},
		},
		[]dop{
			{kind: opReserve, set: 1, cost: 1}, {kind: opTake, set: 2, cost: 1},
			{adv: 1 * ms, kind: opSettle, set: 1, cost: 0, rc: 0}, // the window's count is 0
			{kind: opTake, set: 0, cost: 1},                       // the log denies: Redis DELs the window
			{kind: opTake, set: 1, cost: 1},
		}},
	{"Take with an InFlight limit", diffStart,
		[][]ratekit.Limit{{ratekit.InFlight(1)}},
		[]dop{{kind: opTake, cost: 1}}},
	{"a settle after New York's 25-hour day gives back nothing of the next day", time.Date(2026, 11, 2, 4, 59, 59, 0, time.UTC),
		[][]ratekit.Limit{{ratekit.Calendar(5, calendar.Day, diffZone("America/New_York")), ratekit.GCRA(1, 10*ms, 3).Named("gcra")}},
		[]dop{
			{kind: opReserve, cost: 3}, {kind: opPeek},
			{adv: time.Second, kind: opTake, cost: 2}, // the next day, at its first second
			{kind: opSettle, cost: 0, rc: 0},          // yesterday's 3: nothing to give back today
			{kind: opPeek},
			{adv: ms, kind: opSettle, cost: 4, rc: 0}, // 1 more, charged to today
			{adv: 10 * ms, kind: opTake, cost: 1},
			{kind: opTake, cost: 1},
		}},
	{"New York's repeated hour is one period of two hours, with a block", time.Date(2026, 11, 1, 5, 59, 59, 999999000, time.UTC),
		[][]ratekit.Limit{{ratekit.Calendar(2, calendar.Hour, diffZone("America/New_York")).Block(30 * time.Minute).Named("hour"), ratekit.Calendar(3, calendar.Every(10*time.Second), nil)}},
		[]dop{
			{kind: opTake, cost: 1}, {adv: time.Microsecond, kind: opTake, cost: 1}, // 01:59:59.999999 EDT, 01:00 EST
			{kind: opTake, cost: 1}, // denied: a block of 30 min
			{adv: 30 * time.Minute, kind: opPeek}, {kind: opTake, cost: 1},
			{adv: 30*time.Minute - time.Microsecond, kind: opTake, cost: 1}, // 01:59:59.999999 EST
			{adv: time.Microsecond, kind: opTake, cost: 1},                  // 02:00 EST
		}},
	{"Lord Howe's hour of 30 minutes", time.Date(2026, 10, 3, 15, 29, 59, 0, time.UTC),
		[][]ratekit.Limit{{ratekit.Calendar(1, calendar.Hour, diffZone("Australia/Lord_Howe")).Named("hour"), ratekit.Calendar(3, calendar.Day, diffZone("Australia/Lord_Howe")).Named("day")}},
		[]dop{
			{kind: opReserve, cost: 1},
			{adv: time.Second, kind: opTake, cost: 1}, // 02:30 LHDT: a new hour
			{kind: opSettle, cost: 0, rc: 0},          // the day's unit comes back, not the last hour's
			{kind: opPeek},
			{adv: 30*time.Minute - time.Microsecond, kind: opTake, cost: 1},
			{adv: time.Microsecond, kind: opTake, cost: 1},
		}},
	{"Chatham's hour 2 again for 15 minutes when clocks go back", time.Date(2026, 4, 4, 13, 59, 0, 0, time.UTC),
		[][]ratekit.Limit{{ratekit.Calendar(1, calendar.Hour, diffZone("Pacific/Chatham"))}},
		[]dop{
			{kind: opReserve, cost: 1},
			{adv: time.Minute, kind: opReserve, cost: 1}, // 02:45 CHAST
			{adv: ms, kind: opSettle, cost: 0, rc: 0},
			{kind: opTake, cost: 1},
			{adv: 15*time.Minute - ms, kind: opTake, cost: 1}, // 03:00 CHAST
			{kind: opSettle, cost: 0, rc: 0},
		}},
	// On 2040-12-31 (UTC), the last UTC day of a leap year past the zones'
	// explicit transitions, Go's time.ZoneBounds returns an end before the
	// instant in zones with DST; periods that reach that day used to end on
	// it (memstore admitted every call, Redis refused every call as STALE,
	// the year 2040 ended a day early in London).
	{"2040-12-31", time.Date(2040, 12, 31, 11, 59, 59, 0, time.UTC),
		[][]ratekit.Limit{{ratekit.Calendar(2, calendar.Day, diffZone("America/New_York"))}},
		[]dop{{kind: opTake, cost: 1}, {kind: opTake, cost: 1}, {adv: time.Second, kind: opTake, cost: 1}, {kind: opPeek}}},
	{"the year 2040 in London", time.Date(2040, 6, 1, 0, 0, 0, 0, time.UTC),
		[][]ratekit.Limit{{ratekit.Calendar(2, calendar.Year, diffZone("Europe/London"))}},
		[]dop{{kind: opTake, cost: 1}}},
	// A 1 ms fixed window: the engine's receipt records the window's end as
	// the call's time plus its PTTL (µs), up to 999 µs past the end, and its
	// settle compared that with the live window's end read the same way, to
	// within half a window (500 µs): an extra charge 600 µs after the reserve
	// took the window for another one (held 1, memstore 2).
	{"a 1 ms fixed window's extra charge goes to the charged window", diffStart,
		[][]ratekit.Limit{{ratekit.FixedWindow(6, ms)}},
		[]dop{{adv: 100 * time.Microsecond, kind: opReserve, cost: 1}, {adv: 600 * time.Microsecond, kind: opSettle, cost: 2}}},
	// New numbers keep the state (carry.Used). A bucket's TAT written under
	// another interval is read as that many intervals used: after 3 of 1 ms,
	// 3 of 10 ms. A give-back under the new interval moved the TAT but not
	// memstore's expiry, which stayed at the old TAT's: the state was gone
	// at +5 ms in memstore, with 22 ms left in Redis.
	{"a bucket's give-back under a longer interval lives to its TAT", diffStart,
		[][]ratekit.Limit{{ratekit.GCRA(1, ms, 5).Named("g")}, {ratekit.GCRA(1, 10*ms, 5).Named("g")}},
		[]dop{{kind: opReserve, cost: 3}, {kind: opSettle, set: 1, cost: 2, rc: 0}, {adv: 5 * ms, kind: opPeek, set: 1}}},
	// An InFlight limit's state lives as long as its longest lease. A lease
	// taken or renewed under a shorter Lease set the key's TTL to it, and
	// the leases of 40 ms went with the key: at +11.2 ms memstore (whose
	// state lived to the millisecond after the lease's end) still counted
	// them, Redis (to the lease's millisecond) did not; a renewal cut the
	// TTL in Redis alone.
	{"a lease taken under a shorter lease keeps the longer ones", diffStart,
		[][]ratekit.Limit{{ratekit.InFlight(3).Lease(40 * ms).Named("f")}, {ratekit.InFlight(3).Lease(10 * ms).Named("f")}},
		[]dop{
			{kind: opReserve, cost: 1},
			{adv: 500 * time.Microsecond, kind: opReserve, set: 1, cost: 1},
			{adv: 10700 * time.Microsecond, kind: opPeek},
			{adv: 20 * ms, kind: opPeek}, // the 40 ms lease still holds its slot
		}},
	{"a lease renewed under a shorter lease keeps the longer ones", diffStart,
		[][]ratekit.Limit{{ratekit.InFlight(3).Lease(40 * ms).Named("f")}, {ratekit.InFlight(3).Lease(10 * ms).Named("f")}},
		[]dop{
			{kind: opReserve, cost: 1}, {kind: opReserve, cost: 1},
			{adv: ms, kind: opRenew, set: 1, rc: 1},
			{adv: 15 * ms, kind: opPeek},
		}},
	// The engine's Reset named a limit's block key only when the numbers
	// it was called with had a block; memstore forgets the limit's block
	// whatever its numbers. Now both forget it.
	{"a Reset without a block forgets the block of other numbers", diffStart,
		[][]ratekit.Limit{{ratekit.FixedWindow(1, 10*ms).Block(20 * ms).Named("f")}, {ratekit.FixedWindow(1, 10*ms).Named("f")}},
		[]dop{{kind: opTake, cost: 1}, {kind: opTake, cost: 1}, {kind: opReset, set: 1}, {kind: opPeek}}},
	// An override changes a block, adds none; one set through numbers with
	// a block met the limit without one: the engine's Lua decided without a
	// block (in_force), but memstore blocked, and both reported the limit
	// in force, and listed the override, with the block.
	{"an override's block on a limit without one", diffStart,
		[][]ratekit.Limit{{ratekit.GCRA(2, 5*ms, 4).Named("g")}, {ratekit.GCRA(2, 5*ms, 4).Block(25 * ms).Named("g")}},
		[]dop{
			{kind: opOverride, set: 1, over: ratekit.GCRA(2, 5*ms, 2).Block(25 * ms).Named("g")},
			{kind: opTake, cost: 2}, {kind: opTake, cost: 1}, {kind: opPeek}, {adv: 3 * ms, kind: opTake, cost: 1},
		}},
	// A subject's list of overrides (the end of each) lived to the last
	// millisecond of its longest; a set or clear in that millisecond gave it
	// PEXPIREAT now, which deletes it at once: the override still in force
	// was listed without its end, and the subject left the index.
	{"a clear in the last millisecond of another override keeps its end", diffStart,
		[][]ratekit.Limit{{ratekit.FixedWindow(5, 5*ms).Named("a"), ratekit.FixedWindow(1, 3*ms).Block(10 * ms).Named("b")}},
		[]dop{
			{kind: opOverride, lim: 1, over: ratekit.FixedWindow(2, 8*ms).Block(10 * ms).Named("b"), exp: 5 * ms},
			{kind: opOverride, lim: 0, over: ratekit.FixedWindow(3, 5*ms).Named("a")},
			{adv: 4500 * time.Microsecond, kind: opClear, lim: 0},
			{kind: opPeek},
		}},
}

func TestDifferentialReplays(t *testing.T) {
	for _, rp := range differentialReplays {
		t.Run(rp.name, func(t *testing.T) {
			env := newDiffEnv(t)
			sets := make([][]dlimit, len(rp.sets))
			for i, s := range rp.sets {
				for _, l := range s {
					sets[i] = append(sets[i], dlimit{l, l.String()})
				}
			}
			r := env.startAt(t, rp.start, sets, testing.Verbose())
			t.Cleanup(func() { r.mem.Close() })
			for _, o := range rp.ops {
				if !r.play(o) {
					break
				}
			}
		})
	}
}
