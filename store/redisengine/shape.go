package redisengine

import (
	"slices"
	"strconv"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// A shape is what a set of limits sends with every call, prepared once by
// Prepare:
// their IDs (for the keys), the argument of each limit (its algorithm, three
// parameters and block in one string, which the engine parses once per
// string), the limits with a block, and whether a call needs a draw.
type shape struct {
	limits     []ratekit.Limit
	ids        []string
	static     []string
	blocks     []int // indexes of the limits with a block, in order
	suppressed bool
	inflight   bool // an InFlight limit: a charging call names its lease
	ints       bool // the reply holds integers only: no limit can report a suppression factor
}

func (e *Engine) newShape(limits []ratekit.Limit) (*shape, error) {
	if err := store.CheckLimits(limits); err != nil {
		return nil, err
	}
	sh := &shape{limits: slices.Clone(limits), ids: make([]string, len(limits)), static: make([]string, 0, len(limits))}
	for i, l := range limits {
		sp := l.Spec()
		p, err := e.params(sp)
		if err != nil {
			return nil, err
		}
		sh.ids[i] = sp.ID
		sh.static = append(sh.static, sp.Algorithm+" "+itoa(p[0])+" "+itoa(p[1])+" "+itoa(p[2])+" "+itoa(sp.Block.Milliseconds()))
		if sp.Block > 0 {
			sh.blocks = append(sh.blocks, i)
		}
		sh.suppressed = sh.suppressed || sp.Algorithm == store.Suppressed
		sh.inflight = sh.inflight || sp.Algorithm == store.InFlight
	}
	sh.ints = !sh.suppressed
	for _, l := range limits {
		sh.ints = sh.ints && !e.custom[l.Spec().Algorithm] // a custom algorithm may report a factor
	}
	return sh, nil
}

// params returns the engine's three parameters for a limit.
func (e *Engine) params(sp ratekit.Spec) ([3]int64, error) {
	switch a := sp.Algorithm; {
	case a == store.FixedWindow || a == store.SlidingLog:
		return [3]int64{sp.Quota, sp.Window.Milliseconds(), 0}, nil
	case a == store.SlidingWindow:
		return [3]int64{sp.Quota, sp.Window.Milliseconds(), sp.Precision.Milliseconds()}, nil
	case a == store.GCRA || a == store.TokenBucket || a == store.LeakyBucket:
		return [3]int64{sp.Interval.Microseconds(), sp.Quota, sp.MaxWait.Microseconds()}, nil
	case a == store.Suppressed:
		return [3]int64{sp.Quota, sp.Hard, sp.Window.Milliseconds()}, nil
	case a == store.InFlight:
		return [3]int64{sp.Quota, sp.Window.Milliseconds(), 0}, nil
	case e.custom[a]:
		return sp.Params, nil
	default:
		return [3]int64{}, e.errorf("algorithm %q is not supported", a)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
