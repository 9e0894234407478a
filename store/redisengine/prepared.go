package redisengine

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// Prepare returns limits prepared for calls through c, a store.Settler:
// their arguments and key shapes made once, so a call only adds its
// subject and cost. A store's Prepare is this with its own Conn.
func (e *Engine) Prepare(c Conn, limits []ratekit.Limit) (ratekit.Prepared, error) {
	sh, err := e.newShape(limits)
	if err != nil {
		return nil, err
	}
	return &prepared{e: e, c: c, sh: sh}, nil
}

// prepared is one set of limits of an Engine on a Conn.
type prepared struct {
	e  *Engine
	c  Conn
	sh *shape
}

var _ store.Settler = (*prepared)(nil)

// Take charges cost to every limit for key if all of them admit it, in one
// call; see ratekit.Prepared.
func (p *prepared) Take(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	return p.decide(ctx, key, cost, "take", false)
}

// Peek reports the state of the limits for key without changing it.
func (p *prepared) Peek(ctx context.Context, key string) (ratekit.Decision, error) {
	return p.decide(ctx, key, 1, "peek", false)
}

// Reset forgets the state of the limits for key, blocks included.
func (p *prepared) Reset(ctx context.Context, key string) error {
	start := time.Now()
	t, err := Tag(key)
	if err != nil {
		return err
	}
	cmd := &Command{Keys: p.e.keys(t, p.sh, nil), head: []string{"0", "reset"}}
	_, err = p.e.run(ctx, p.c, progDecide, cmd)
	return p.e.explain(ctx, start, err)
}

// Reserve is Take that records what an admitted call charged in
// Decision.Receipt (see store.Settler): the call's time comes back with
// the decision, in the same round trip, and each InFlight limit takes a
// lease named by the engine.
func (p *prepared) Reserve(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	return p.decide(ctx, key, cost, "take", true)
}

// Settle moves the charge rc records to cost and releases rc's lease, in
// one call (lua/settle.lua); see store.Settler. It updates rc.
func (p *prepared) Settle(ctx context.Context, key string, rc *ratekit.Receipt, cost int64) error {
	if err := store.CheckCost(cost); err != nil {
		return err
	}
	r, err := p.settle(ctx, key, rc, "settle", cost)
	if err != nil {
		return err
	}
	for i := range p.sh.ids {
		rc.Ends[i], rc.Held[i] = r[2*i], r[2*i+1]
	}
	rc.Cost = cost
	return nil
}

// Renew extends rc's lease in every InFlight limit by one lease from now,
// and reports whether every one still held it; see store.Settler.
func (p *prepared) Renew(ctx context.Context, key string, rc *ratekit.Receipt) (bool, error) {
	held, err := p.settle(ctx, key, rc, "renew", -1)
	if err != nil {
		return false, err
	}
	for _, h := range held {
		if h != 1 {
			return false, nil
		}
	}
	return true, nil
}

// decide makes one call of the engine's decide program in mode ("take",
// "peek"; a charging call of a set with an InFlight limit, or a receipt's,
// is a "reserve") and reads its reply.
func (p *prepared) decide(ctx context.Context, key string, cost int64, mode string, receipt bool) (_ ratekit.Decision, err error) {
	start := time.Now()
	if err := store.CheckCost(cost); err != nil {
		return ratekit.Decision{}, err
	}
	e, c, sh := p.e, p.c, p.sh
	defer func() { err = e.explain(ctx, start, err) }()
	t, err := Tag(key)
	if err != nil {
		return ratekit.Decision{}, err
	}
	cmd := &Command{static: sh.static, ints: sh.ints}
	cmd.Keys = e.keys(t, sh, cmd)
	cmd.h[0], cmd.h[1] = itoa(cost), mode
	cmd.head = cmd.h[:2]
	var lease string
	var sent int64
	reserve := receipt || mode == "take" && cost > 0 && sh.all&algo.Holds != 0
	if reserve {
		// a call that takes leases names them, says when it charged, and
		// takes nothing once its caller has given up (see reserveLate)
		lease = e.lease(sh)
		sent = e.offset.now()
		cmd.h[1], cmd.h[2], cmd.h[3] = "reserve", lease, itoa(e.offset.deadline(ctx))
		cmd.head = cmd.h[:]
	}
	if sh.all&algo.Draws != 0 {
		cmd.t[0] = itoa(store.DrawBits(e.random()))
		cmd.tail = cmd.t[:]
	}
	reply, err := e.run(ctx, c, progDecide, cmd)
	if receipt && err != nil && replyHas(err, "LATE ") {
		reply, err = e.reserveLate(ctx, c, cmd, err, &sent)
	}
	if err != nil {
		return ratekit.Decision{}, err
	}
	if !reserve {
		return e.parseDecision(reply, sh.limits)
	}
	d, err := e.parseReserve(reply, sh, cost, lease, sent)
	if !receipt {
		d.Receipt = nil // a Take holds no receipt, as memstore's
	}
	return d, err
}

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
