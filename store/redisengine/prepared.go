package redisengine

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// Prepare returns limits prepared for calls through c, a store.Settler:
// their arguments and key shapes made once, so a call only adds its
// subject and cost. A store's Prepare is this with its own Conn.
func (e *Engine) Prepare(c Conn, limits []ratekit.Limit) (ratekit.Prepared, error) {
	p, err := e.prepare(c, limits)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// prepared is a set of limits prepared on an Engine for a Conn: what every
// call sends, made once: their IDs (for the keys), the argument of each
// limit ("<algorithm> <p1> <p2> <p3> <block ms>"), the limits with a block
// and what each algorithm can do.
type prepared struct {
	e      *Engine
	c      Conn
	limits []ratekit.Limit
	specs  []algo.Spec
	ids    []string
	static []string    // the arguments, unless timed
	blocks []int       // indexes of the limits with a block, in order
	caps   []algo.Caps // each limit's
	all    algo.Caps   // every limit's: Draws, a call needs a draw; Holds, a charging call names its lease
	ints   bool        // the reply holds integers only: no limit can report a suppression factor
	timed  bool        // some limit's arguments follow the clock (Calendar): see argsAt
	period atomic.Pointer[periodArgs]

	overrides  sync.Map // overridden → ratekit.Limit: the limits in force under overrides (see inForce)
	nOverrides atomic.Int64
}

// periodArgs are the arguments of the calls made at times in [from, until)
// (µs) on Redis's clock.
type periodArgs struct {
	from, until int64
	static      []string
}

func (e *Engine) prepare(c Conn, limits []ratekit.Limit) (*prepared, error) {
	if err := store.CheckLimits(limits); err != nil {
		return nil, err
	}
	n := len(limits)
	p := &prepared{e: e, c: c, limits: slices.Clone(limits), specs: make([]algo.Spec, n), ids: make([]string, n), caps: make([]algo.Caps, n), ints: true}
	for i, l := range limits {
		sp := algo.Spec(l.Spec())
		_, builtin := algo.Lookup(sp.Algorithm)
		if _, custom := e.custom[sp.Algorithm]; !builtin && !custom {
			return nil, e.errorf("algorithm %q is not supported", sp.Algorithm)
		}
		r := algo.Of(sp.Algorithm)
		p.specs[i], p.ids[i] = sp, sp.ID
		if from, until := r.Period(&sp, 0); from != math.MinInt64 || until != math.MaxInt64 {
			p.timed = true
		}
		if sp.Block > 0 {
			p.blocks = append(p.blocks, i)
		}
		p.caps[i] = r.Caps()
		p.all |= p.caps[i]
		p.ints = p.ints && builtin && p.caps[i]&algo.Draws == 0 // a custom algorithm may report a factor
	}
	if !p.timed {
		p.static = p.build(0).static
	}
	return p, nil
}

// build returns the limits' arguments for a call at now (µs), each
// "<algorithm> <p1> <p2> <p3> <block ms>", and the stretch of time they serve.
func (p *prepared) build(now int64) *periodArgs {
	a := &periodArgs{from: math.MinInt64, until: math.MaxInt64, static: make([]string, len(p.specs))}
	for i := range p.specs {
		sp := &p.specs[i]
		r := algo.Of(sp.Algorithm)
		args := r.Args(sp, now)
		a.static[i] = sp.Algorithm + " " + itoa(args[0]) + " " + itoa(args[1]) + " " + itoa(args[2]) + " " + itoa(sp.Block.Milliseconds())
		from, until := r.Period(sp, now)
		a.from, a.until = max(a.from, from), min(a.until, until)
	}
	return a
}

// args returns the limits' arguments for a call at now: made once, or, when
// they follow the clock, once per period. Now is the engine's estimate of
// Redis's clock; Redis refuses arguments made for another time (see stale),
// and the call is sent again with Redis's.
func (p *prepared) args(now time.Time) []string {
	if !p.timed {
		return p.static
	}
	return p.argsAt(now.UnixMicro() + p.e.skew.Load())
}

func (p *prepared) argsAt(now int64) []string {
	if a := p.period.Load(); a != nil && a.from <= now && now < a.until {
		return a.static
	}
	a := p.build(now)
	p.period.Store(a)
	return a.static
}

// restale answers a call Redis refused as made for another time (err:
// "STALE <Redis's µs>"), which ran nothing: it learns Redis's clock and
// sends cmd again, once, with the arguments for Redis's time.
func (p *prepared) restale(ctx context.Context, prog int, cmd *Command, err error, sent int64) (any, error) {
	msg, _ := replyMsg(err)
	redis, perr := strconv.ParseInt(strings.TrimPrefix(msg, "STALE "), 10, 64)
	if perr != nil {
		return nil, err
	}
	p.e.skew.Store(redis - (sent+time.Now().UnixMicro())/2)
	cmd.static = p.argsAt(redis)
	return p.e.run(ctx, p.c, prog, cmd)
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
	// every limit's block key, whether or not its numbers have a block: a
	// block set under other numbers goes too
	keys := make([]string, 0, 2*len(p.ids))
	for _, id := range p.ids {
		keys = append(keys, p.e.key(t, id, ""), p.e.key(t, id, ":block"))
	}
	cmd := &Command{Keys: keys, head: []string{"0", "reset"}}
	_, err = p.e.run(ctx, p.c, progDecide, cmd)
	return p.e.explain(ctx, start, err)
}

// Reserve is Take that records what an admitted call charged in
// Decision.Receipt, in the same round trip; see store.Settler.
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
	for i := range p.ids {
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
	return !slices.ContainsFunc(held, func(h int64) bool { return h != 1 }), nil
}

// decide makes one call of the decide program in mode, "take" or "peek" (a
// "reserve" for a receipt, or to take an InFlight limit's lease).
func (p *prepared) decide(ctx context.Context, key string, cost int64, mode string, receipt bool) (_ ratekit.Decision, err error) {
	start := time.Now()
	if err := store.CheckCost(cost); err != nil {
		return ratekit.Decision{}, err
	}
	e := p.e
	defer func() { err = e.explain(ctx, start, err) }()
	t, err := Tag(key)
	if err != nil {
		return ratekit.Decision{}, err
	}
	cmd := &Command{static: p.args(start), ints: p.ints}
	cmd.Keys = e.keys(t, p, cmd, true)
	cmd.h[0], cmd.h[1] = itoa(cost), mode
	cmd.head = cmd.h[:2]
	var lease string
	var sent int64
	reserve := receipt || mode == "take" && cost > 0 && p.all&algo.Holds != 0
	if reserve {
		// a call that takes leases names them, says when it charged, and
		// takes nothing once its caller has given up (see reserveLate)
		if p.all&algo.Holds != 0 {
			lease = e.leasePrefix + itoa(e.leases.Add(1))
		}
		sent = e.offset.now()
		cmd.h[1], cmd.h[2], cmd.h[3] = "reserve", lease, itoa(e.offset.deadline(ctx))
		cmd.head = cmd.h[:]
	}
	if p.all&algo.Draws != 0 {
		cmd.t[0] = itoa(store.DrawBits(e.random()))
		cmd.tail = cmd.t[:]
	}
	reply, err := e.run(ctx, p.c, progDecide, cmd)
	if p.timed && err != nil && replyHas(err, "STALE ") {
		reply, err = p.restale(ctx, progDecide, cmd, err, start.UnixMicro())
	}
	if receipt && err != nil && replyHas(err, "LATE ") {
		reply, err = e.reserveLate(ctx, p.c, cmd, err, &sent)
	}
	if err != nil {
		return ratekit.Decision{}, err
	}
	if !reserve {
		return p.parseDecision(reply)
	}
	d, err := p.parseReserve(reply, cost, lease, sent)
	if !receipt {
		d.Receipt = nil // a Take holds no receipt, as memstore's
	}
	return d, err
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
