package redisengine

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
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
	// engine's contract (docs/architecture.md, "Custom algorithms").
	Algorithms map[string]string
	// Explain, when set, rewrites the error of a call that started at
	// start: a store adds what it knows of its client (default: none).
	Explain func(ctx context.Context, start time.Time, err error) error
	// Random is the source of uniform draws in [0, 1) for Suppressed limits
	// (default math/rand/v2's Float64); it must be safe for concurrent use.
	Random func() float64
}

// An Engine decides rate limits in Redis through a Conn, so that a store for
// a Redis client is only its Conn. Build it with New; the zero Engine is not
// usable. It is safe for concurrent use, and may serve several Conns.
type Engine struct {
	name      string
	prefix    string
	custom    map[string]string // Options.Algorithms
	random    func() float64
	explainer func(ctx context.Context, start time.Time, err error) error
	src       *sources

	leasePrefix string       // random: leases from other engines never collide
	leases      atomic.Int64 // the last lease number handed out
	offset      *offsets     // Redis's clock against the engine's, for reserve deadlines
	skew        atomic.Int64 // Redis's clock less the wall clock (µs), as a refused Calendar call showed it

	scripts atomic.Bool  // the server has no Functions, or refuses them: run scripts
	loadMu  sync.Mutex   // one FUNCTION LOAD at a time
	loads   atomic.Int64 // loads done, so callers that waited skip theirs
}

// New returns an Engine, or an error for a bad prefix or custom algorithm.
func New(o Options) (*Engine, error) {
	e := &Engine{name: o.Name, prefix: o.Prefix, random: o.Random, explainer: o.Explain, custom: maps.Clone(o.Algorithms),
		leasePrefix: fmt.Sprintf("%016x:", rand.Uint64()), offset: newOffsets(nil)}
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
		return nil, e.errorf("%w", err)
	}
	src, err := buildSources(o.Algorithms)
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	e.src = src
	return e, nil
}

// explain is Options.Explain, or err as it is.
func (e *Engine) explain(ctx context.Context, start time.Time, err error) error {
	if err == nil || e.explainer == nil {
		return err
	}
	return e.explainer(ctx, start, err)
}

// errorf returns an error prefixed "ratekit: <name>: ".
func (e *Engine) errorf(format string, args ...any) error {
	return fmt.Errorf("ratekit: "+e.name+": "+format, args...)
}
