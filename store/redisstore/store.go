package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/redisengine"
)

// DefaultPrefix starts every key unless WithPrefix says otherwise.
const DefaultPrefix = redisengine.DefaultPrefix

// Store is a ratekit.Store (and a reputation.Store) backed by Redis through
// go-redis. It is safe for concurrent use. Build it with New; the zero Store
// is not usable.
type Store struct {
	rep redisengine.Extras // the reputation methods

	proc processor
	ap   *redis.AutoPipeliner // the client's autopipeliner, or nil (see pipeliner)
	// busy counts the calls in flight when the store has an autopipeliner,
	// which sends a call only when more than pipelineAbove are (see Eval).
	busy   atomic.Int64
	eng    *redisengine.Engine
	opts   redisengine.Options
	logger *slog.Logger // warnings from Ping (WithLogger)
	dials  *dialWatch   // the client's last failed dial

	lastReload atomic.Int64 // UnixNano of the last slot-map reload asked (reloadSlots)
}

// processor is implemented by every go-redis client.
type processor interface {
	redis.Scripter
	Process(ctx context.Context, cmd redis.Cmder) error
}

// An Option configures a Store; build one with a With… function.
type Option interface{ apply(*Store) }

// optionFunc adapts a function to Option.
type optionFunc func(*Store)

func (f optionFunc) apply(s *Store) { f(s) }

// WithPrefix sets the first segment of every key (default "ratekit"): 1 to 32
// printable ASCII characters without space or braces. Use distinct prefixes to
// keep applications that share a Redis apart.
func WithPrefix(prefix string) Option {
	return optionFunc(func(s *Store) { s.opts.Prefix = prefix })
}

// New returns a Store that runs its calls through client: a go-redis
// *redis.Client, *redis.ClusterClient, *redis.Ring or redis.UniversalClient,
// with ContextTimeoutEnabled (see the package doc); a Scripter without a
// Process method is refused, as the store could not stop its retries. New
// sends nothing to Redis (call Store.Ping at start); it hooks the client's
// dials, so that a call cut short by its context can name a failed dial.
//
// Through a *redis.Client (Sentinel's too) or *redis.ClusterClient whose
// options set AutoPipelineOptions, as ClientOptions does, calls go out in
// pipelines while more than 8 are in flight, each still one atomic call
// never sent twice, waited for until its context ends, and dropped unsent
// if that ends before its batch is dispatched (a hook New adds).
func New(client redis.Scripter, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errNilClient
	}
	proc, ok := client.(processor)
	if !ok {
		return nil, fmt.Errorf("ratekit: redisstore: %T has no Process method; pass a go-redis client", client)
	}
	if err := checkClient(client); err != nil {
		return nil, err
	}
	s := &Store{proc: proc, dials: &dialWatch{}, logger: slog.Default(), opts: redisengine.Options{Name: "redisstore"}}
	for _, o := range opts {
		if o != nil {
			o.apply(s)
		}
	}
	s.opts.Explain = s.explain
	eng, err := redisengine.New(s.opts)
	if err != nil {
		return nil, err
	}
	s.eng = eng
	s.rep = redisengine.Extras{Engine: eng, Conn: (*conn)(s)}
	if s.ap, err = pipeliner(client); err != nil {
		return nil, err
	}
	if s.ap != nil {
		proc.(interface{ AddHook(redis.Hook) }).AddHook(dropExpired{})
	}
	s.dials.watch(client)
	return s, nil
}

var (
	_ ratekit.Store    = (*Store)(nil)
	_ reputation.Store = (*Store)(nil)
)

var errNilClient = errors.New("ratekit: redisstore: nil client")

// Prepare implements ratekit.Store: limits prepared once, whose calls
// decide in one round trip each (a store.Settler).
func (s *Store) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return s.eng.Prepare((*conn)(s), limits)
}

// SetOverride puts l's numbers in force for subject, for expiry (0: until
// cleared), in Redis beside the subject's counters: every decision about
// the subject reads it in its own call. Limiter.Override calls it; see
// store.Overrider.
func (s *Store) SetOverride(ctx context.Context, subject string, l ratekit.Limit, expiry time.Duration) error {
	return s.eng.SetOverride(ctx, (*conn)(s), subject, l, expiry)
}

// ClearOverride ends subject's override of l. Limiter.ClearOverride calls
// it; see store.Overrider.
func (s *Store) ClearOverride(ctx context.Context, subject string, l ratekit.Limit) error {
	return s.eng.ClearOverride(ctx, (*conn)(s), subject, l)
}

// ListOverrides calls f with each override in force of limits, for subject
// or (subject "") every subject. Limiter.Overrides calls it; see
// store.Overrider.
func (s *Store) ListOverrides(ctx context.Context, subject string, limits []ratekit.Limit, f func(string, ratekit.Limit, time.Time)) error {
	return s.eng.ListOverrides(ctx, (*conn)(s), subject, limits, f)
}

// Keys returns the Redis keys that hold subject's state for limits: one state
// key per limit in order, then a block key per limit with a block. They all
// hash to one Redis Cluster slot.
func (s *Store) Keys(subject string, limits []ratekit.Limit) ([]string, error) {
	return s.eng.Keys(subject, limits)
}

// WithAlgorithm registers a custom algorithm, run by limits built with
// ratekit.Custom(name, …): source is a Lua function following the engine's
// contract (docs/architecture.md, "Custom algorithms"). A store with custom
// algorithms runs its own copy of the engine.
func WithAlgorithm(name string, source string) Option {
	return optionFunc(func(s *Store) {
		if s.opts.Algorithms == nil {
			s.opts.Algorithms = map[string]string{}
		}
		s.opts.Algorithms[name] = source
	})
}

// WithRandom sets the source of the uniform draws in [0, 1) for Suppressed
// limits (default math/rand/v2's Float64: Redis seeds Lua's math.random alike
// for every script); it must be safe for concurrent use.
func WithRandom(f func() float64) Option {
	return optionFunc(func(s *Store) {
		if f != nil {
			s.opts.Random = f
		}
	})
}
