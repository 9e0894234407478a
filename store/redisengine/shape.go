package redisengine

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// A shape is what a set of limits sends with every call, prepared once:
// their IDs (for the keys), the argument of each limit (its algorithm, three
// parameters and block in one string, which the engine parses once per
// string), the limits with a block, and whether a call needs a draw.
type shape struct {
	ids        []string
	static     []string
	blocks     []int // indexes of the limits with a block, in order
	suppressed bool
	inflight   bool // an InFlight limit: a charging call names its lease
	ints       bool // the reply holds integers only: no limit can report a suppression factor
}

// maxShapes bounds the shapes an engine keeps: a service has a few sets of
// limits; a caller that makes new ones per call gets them prepared per call.
// perFirst bounds the sets kept under one first limit (see shapes).
const (
	maxShapes = 1024
	perFirst  = 8
)

// shapes caches shapes by the ID of their first limit: a list of the sets
// that start with it (Limiters that share their first limit, a shadow
// split), looked up without building a key. A list is never changed once
// stored; a new set replaces it with a longer copy, or, at perFirst sets,
// one without its oldest.
type shapes struct {
	m sync.Map // first limit's ID -> []*shape
	n atomic.Int64
}

// shapeOf returns the shape of limits, prepared once per set of limits.
// Limits are checked as store.CheckLimits does when their shape is made.
func (e *Engine) shapeOf(limits []ratekit.Limit) (*shape, error) {
	if len(limits) == 0 {
		return nil, store.CheckLimits(limits)
	}
	first := limits[0].Spec().ID
	v, found := e.shapes.m.Load(first)
	var list []*shape
	if found {
		list = v.([]*shape)
		for _, sh := range list {
			if sh.matches(limits) {
				return sh, nil
			}
		}
	}
	sh, err := e.newShape(limits)
	if err != nil {
		return nil, err
	}
	if !found && e.shapes.n.Add(1) > maxShapes {
		e.shapes.n.Add(-1)
		return sh, nil // over the bound: left uncached
	}
	if len(list) >= perFirst {
		list = list[1:]
	}
	e.shapes.m.Store(first, append(append([]*shape(nil), list...), sh))
	return sh, nil
}

// matches reports whether limits are the limits sh was made for.
func (sh *shape) matches(limits []ratekit.Limit) bool {
	if len(limits) != len(sh.ids) {
		return false
	}
	for i := range limits {
		if limits[i].Spec().ID != sh.ids[i] {
			return false
		}
	}
	return true
}

func (e *Engine) newShape(limits []ratekit.Limit) (*shape, error) {
	if err := store.CheckLimits(limits); err != nil {
		return nil, err
	}
	sh := &shape{ids: make([]string, len(limits)), static: make([]string, 0, len(limits))}
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
