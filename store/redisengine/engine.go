package redisengine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// DefaultPrefix starts every key unless Options.Prefix says otherwise.
const DefaultPrefix = "ratekit"

// Options configure an Engine. The zero value is ready to use: the default
// prefix, the built-in algorithms and math/rand/v2's draws.
type Options struct {
	// Name names the store in errors: "ratekit: <Name>: ..." (default
	// "redisengine").
	Name string
	// Prefix is the first segment of every key (default "ratekit"): 1 to 32
	// printable ASCII characters without space or braces.
	Prefix string
	// Algorithms are custom algorithms by name: Lua functions that follow the
	// engine's contract (see the package doc and lua/engine.lua).
	Algorithms map[string]string
	// Random is the source of uniform draws in [0, 1) for Suppressed limits
	// (default math/rand/v2's Float64); it must be safe for concurrent use.
	Random func() float64
}

// An Engine decides rate limits in Redis through a Conn: it holds the Lua
// programs, the key schema, the arguments prepared per set of limits and the
// checks of every reply, so that a store for a Redis client is only its Conn.
// Build it with New; the zero Engine is not usable. It is safe for
// concurrent use, and one Engine may serve several Conns.
type Engine struct {
	name       string
	prefix     string
	custom     map[string]bool
	random     func() float64
	src        *sources
	shapes     shapes
	lastPolicy lastPolicy // the last reputation policy used

	leaseOnce   sync.Once    // makes leasePrefix
	leasePrefix string       // random, per engine: leases from other engines never collide
	leases      atomic.Int64 // the last lease number handed out
	offset      *offsets     // Redis's clock against the engine's, for reserve deadlines

	mode   atomic.Int32 // modeUnknown, modeFunctions or modeScripts
	loadMu sync.Mutex   // one FUNCTION LOAD at a time
	loads  atomic.Int64 // loads done, so callers that waited skip theirs
}

// New returns an Engine, or an error for a bad prefix or custom algorithm.
func New(o Options) (*Engine, error) {
	e := &Engine{name: o.Name, prefix: o.Prefix, random: o.Random, custom: map[string]bool{}, offset: newOffsets(nil)}
	if e.name == "" {
		e.name = "redisengine"
	}
	if e.prefix == "" {
		e.prefix = DefaultPrefix
	}
	if e.random == nil {
		e.random = rand.Float64
	}
	if err := validatePrefix(e.prefix); err != nil {
		return nil, e.wrap(err)
	}
	src, err := buildSources(o.Algorithms)
	if err != nil {
		return nil, e.wrap(err)
	}
	for name := range o.Algorithms {
		e.custom[name] = true
	}
	e.src = src
	return e, nil
}

// errorf returns an error prefixed "ratekit: <name>: ".
func (e *Engine) errorf(format string, args ...any) error {
	return fmt.Errorf("ratekit: "+e.name+": "+format, args...)
}

// wrap prefixes err with "ratekit: <name>: ", once.
func (e *Engine) wrap(err error) error {
	msg := strings.TrimPrefix(err.Error(), "ratekit: ")
	return &prefixed{msg: "ratekit: " + e.name + ": " + msg, err: err}
}

type prefixed struct {
	msg string
	err error
}

func (p *prefixed) Error() string { return p.msg }
func (p *prefixed) Unwrap() error { return p.err }

// Take charges cost to every limit for key if all of them admit it, in one
// call through c; see ratekit.Store.
func (e *Engine) Take(ctx context.Context, c Conn, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	if err := store.CheckCost(cost); err != nil {
		return ratekit.Decision{}, err
	}
	return e.decide(ctx, c, key, limits, cost, "take", false)
}

// Peek reports the state of limits for key without changing it; see
// ratekit.Store.
func (e *Engine) Peek(ctx context.Context, c Conn, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	return e.decide(ctx, c, key, limits, 1, "peek", false)
}

// Reset forgets the state of limits for key, blocks included.
func (e *Engine) Reset(ctx context.Context, c Conn, key string, limits []ratekit.Limit) error {
	keys, err := e.Keys(key, limits)
	if err != nil {
		return err
	}
	cmd := &Command{Keys: keys, head: []string{"0", "reset"}}
	_, err = e.run(ctx, c, progDecide, cmd)
	return err
}

func (e *Engine) decide(ctx context.Context, c Conn, key string, limits []ratekit.Limit, cost int64, mode string, receipt bool) (ratekit.Decision, error) {
	t, err := Tag(key)
	if err != nil {
		return ratekit.Decision{}, err
	}
	sh, err := e.shapeOf(limits)
	if err != nil {
		return ratekit.Decision{}, err
	}
	cmd := &Command{static: sh.static, ints: sh.ints}
	cmd.Keys = e.keys(t, sh, cmd)
	cmd.h[0], cmd.h[1] = costString(cost), mode
	cmd.head = cmd.h[:2]
	var lease string
	var sent int64
	reserve := receipt || mode == "take" && cost > 0 && sh.inflight
	if reserve {
		// a call that takes leases names them, says when it charged, and
		// takes nothing once its caller has given up (see reserveLate)
		lease = e.lease(sh)
		sent = e.offset.now()
		cmd.h[1], cmd.h[2], cmd.h[3] = "reserve", lease, itoa(e.offset.deadline(ctx))
		cmd.head = cmd.h[:]
	}
	if sh.suppressed {
		cmd.t[0] = itoa(store.DrawBits(e.random()))
		cmd.tail = cmd.t[:]
	}
	reply, err := e.run(ctx, c, progDecide, cmd)
	if receipt && err != nil && late(err) {
		reply, err = e.reserveLate(ctx, c, cmd, err, &sent)
	}
	if err != nil {
		return ratekit.Decision{}, err
	}
	if !reserve {
		return e.parseDecision(reply, limits)
	}
	d, err := e.parseReserve(reply, limits, cost, lease, sent)
	if !receipt {
		d.Receipt = nil // a Take holds no receipt, as memstore's
	}
	return d, err
}

// costs are the strings of the usual costs, made once.
var costs = func() (s [64]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func costString(cost int64) string {
	if cost >= 0 && cost < int64(len(costs)) {
		return costs[cost]
	}
	return itoa(cost)
}
