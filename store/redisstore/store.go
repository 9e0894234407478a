package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/redisengine"
)

// DefaultPrefix starts every key unless WithPrefix says otherwise.
const DefaultPrefix = redisengine.DefaultPrefix

// Store is a ratekit.Store backed by Redis through go-redis: a thin client of
// the engine in store/redisengine, which holds the Lua programs, keys and
// reply checks. It is safe for concurrent use.
type Store struct {
	rep redisengine.Extras // the reputation methods (reputation.go)

	proc   processor
	eng    *redisengine.Engine
	opts   redisengine.Options
	logger *slog.Logger // warnings from Ping (WithLogger)
	dials  *dialWatch   // the client's last failed dial (the client's hook keeps only this)

	lastReload atomic.Int64 // when the store last asked its cluster client to reload its slot map, UnixNano
}

// processor is implemented by every go-redis client; the store uses it to
// send its calls as commands that go-redis will not retry.
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
// *redis.Client, *redis.ClusterClient, *redis.Ring or redis.UniversalClient.
// A Scripter without a Process method is rejected, because the store could
// not stop its retries from charging twice. So is a *redis.Client,
// *redis.ClusterClient or *redis.Ring (also behind a redis.UniversalClient)
// whose options leave ContextTimeoutEnabled false, because a Redis that stops
// answering would then hold every call for the client's ReadTimeout; a client
// of another type, which the store cannot inspect, is accepted as it is.
//
// New sends nothing to Redis: call Store.Ping at start to learn whether Redis
// answers. It adds a hook to the client that only watches its dials (of a
// cluster client: the dials of the nodes it creates from then on), so that a
// call cut short by its context can name the failure go-redis had not yet
// reported, such as a refused connection.
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

// Keys returns the Redis keys that hold subject's state for limits: one state
// key per limit in order, then a block key per limit with a block. They all
// hash to one Redis Cluster slot.
func (s *Store) Keys(subject string, limits []ratekit.Limit) ([]string, error) {
	return s.eng.Keys(subject, limits)
}

// WithAlgorithm registers a custom algorithm, run by limits built with
// ratekit.Custom(name, …). source is a Lua function following the engine's
// contract (see store/redisengine's lua/engine.lua and its package doc):
//
//	function(r, key, p1, p2, p3)
//	  -- read state with redis.call; write nothing
//	  r.allowed, r.remaining, r.reset = allowed, remaining, reset_us
//	  if not allowed then r.retry, r.flags = retry_us, flags end
//	  if allowed and charge then -- the write, committed if every limit admits
//	    r.op, r.a, r.b, r.after_remaining, r.after_reset = op, a, b, after_remaining, after_reset_us
//	  end
//	  return r
//	end
//
// where r is a table the engine lends (its window, factor and op cleared;
// clear a field with false, not nil), or the function may return a table
// of its own; op is 'incr' (INCRBY cost), 'decr', 'set' (SET a PX b),
// 'del', 'hincr' or 'zadd'; and cost, charge, clock() and int() are in
// scope. A store with custom algorithms runs its own copy of the engine (its
// own Functions library).
func WithAlgorithm(name string, source string) Option {
	return optionFunc(func(s *Store) {
		if s.opts.Algorithms == nil {
			s.opts.Algorithms = map[string]string{}
		}
		s.opts.Algorithms[name] = source
	})
}

// WithRandom sets the source of the uniform draws in [0, 1) that decide
// calls of Suppressed limits in their probabilistic range (default
// math/rand/v2's Float64). It must be safe for concurrent use. The draw is
// made in Go and passed to the script, because Redis seeds Lua's
// math.random identically for every script; tests inject draws here.
func WithRandom(f func() float64) Option {
	return optionFunc(func(s *Store) {
		if f != nil {
			s.opts.Random = f
		}
	})
}
