package redisengine

import (
	"slices"
	"strconv"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// A shape is what a set of limits sends with every call, prepared once by
// Prepare: their IDs (for the keys), the argument of each limit
// ("<algorithm> <p1> <p2> <p3> <block ms>"), the limits with a block and
// what each algorithm can do.
type shape struct {
	limits []ratekit.Limit
	ids    []string
	static []string
	blocks []int       // indexes of the limits with a block, in order
	caps   []algo.Caps // each limit's
	all    algo.Caps   // every limit's: Draws, a call needs a draw; Holds, a charging call names its lease
	ints   bool        // the reply holds integers only: no limit can report a suppression factor
}

func (e *Engine) newShape(limits []ratekit.Limit) (*shape, error) {
	if err := store.CheckLimits(limits); err != nil {
		return nil, err
	}
	n := len(limits)
	sh := &shape{limits: slices.Clone(limits), ids: make([]string, n), static: make([]string, 0, n), caps: make([]algo.Caps, n)}
	sh.ints = true
	for i, l := range limits {
		sp := algo.Spec(l.Spec())
		_, builtin := algo.Lookup(sp.Algorithm)
		if _, custom := e.custom[sp.Algorithm]; !builtin && !custom {
			return nil, e.errorf("algorithm %q is not supported", sp.Algorithm)
		}
		r := algo.Of(sp.Algorithm)
		p := r.Args(&sp)
		sh.ids[i] = sp.ID
		sh.static = append(sh.static, sp.Algorithm+" "+itoa(p[0])+" "+itoa(p[1])+" "+itoa(p[2])+" "+itoa(sp.Block.Milliseconds()))
		if sp.Block > 0 {
			sh.blocks = append(sh.blocks, i)
		}
		sh.caps[i] = r.Caps()
		sh.all |= sh.caps[i]
		sh.ints = sh.ints && builtin && sh.caps[i]&algo.Draws == 0 // a custom algorithm may report a factor
	}
	return sh, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
