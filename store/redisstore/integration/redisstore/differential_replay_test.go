package redisstore_test

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

const ms = time.Millisecond

// differentialReplays are sequences the differential test plays as given,
// from diffStart: the smallest replays of divergences found and fixed,
// and any failing random sequence pasted from the test's output. Any
// mismatch fails.
var differentialReplays = []struct {
	name  string
	start time.Duration // from diffStart
	sets  [][]ratekit.Limit
	ops   []dop
}{
	{"fixed window at PTTL 0 admits into a window that ends at once", 0,
		[][]ratekit.Limit{{ratekit.FixedWindow(2, 5*ms)}},
		[]dop{{kind: opTake, cost: 1}, {adv: 5 * ms, kind: opTake, cost: 1}}},
	{"fixed window at PTTL 0 denies with RetryAfter 0", 0,
		[][]ratekit.Limit{{ratekit.FixedWindow(1, 5*ms)}},
		[]dop{{kind: opTake, cost: 1}, {adv: 5 * ms, kind: opTake, cost: 1}}},
	{"fixed window at PTTL 0 in Reserve", 0,
		[][]ratekit.Limit{{ratekit.FixedWindow(3, 5*ms), ratekit.GCRA(1, 5*ms, 1)}},
		[]dop{{kind: opReserve, cost: 1}, {adv: 5 * ms, kind: opReserve, cost: 1}}},
	{"a charge after a refund emptied a fixed window", 0,
		[][]ratekit.Limit{{ratekit.FixedWindow(3, 10*ms)}},
		[]dop{{kind: opReserve, cost: 2}, {adv: 4 * ms, kind: opSettle, cost: 0, rc: 0}, {kind: opTake, cost: 1}}},
	{"another limit denies after a refund emptied a fixed window", 0,
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
	{"Take with an InFlight limit", 0,
		[][]ratekit.Limit{{ratekit.InFlight(1)}},
		[]dop{{kind: opTake, cost: 1}}},
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
			r := env.startAt(t, diffStart.Add(rp.start), sets, testing.Verbose())
			t.Cleanup(func() { r.mem.Close() })
			for _, o := range rp.ops {
				if !r.play(o) {
					break
				}
			}
		})
	}
}
