package redisstore

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// DefaultPrefix starts every key unless WithPrefix says otherwise.
const DefaultPrefix = "ratekit"

// Store is a ratekit.Store backed by Redis. It is safe for concurrent use.
type Store struct {
	proc   processor
	prefix string
	script *script
	custom map[string]string
	random func() float64 // uniform draws in [0, 1) for Suppressed limits
	logger *slog.Logger   // warnings from Ping (WithLogger)

	lastPolicy atomic.Pointer[compiledPolicy] // the last reputation policy used
	dials      *dialWatch                     // the client's last failed dial (the client's hook keeps only this)
}

// processor is implemented by every go-redis client; the store uses it to
// send its script as a command that go-redis will not retry.
type processor interface {
	redis.Scripter
	Process(ctx context.Context, cmd redis.Cmder) error
}

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the first segment of every key (default "ratekit"): 1 to 32
// printable ASCII characters without space or braces. Use distinct prefixes to
// keep applications that share a Redis apart.
func WithPrefix(prefix string) Option {
	return func(s *Store) { s.prefix = prefix }
}

// New returns a Store that runs its script through client: a go-redis
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
	s := &Store{proc: proc, prefix: DefaultPrefix, random: rand.Float64, dials: &dialWatch{}, logger: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	if err := validatePrefix(s.prefix); err != nil {
		return nil, err
	}
	sc, err := buildScript(s.custom)
	if err != nil {
		return nil, err
	}
	s.script = sc
	s.dials.watch(client)
	return s, nil
}

// Take implements ratekit.Store.
func (s *Store) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	if err := store.CheckCost(cost); err != nil {
		return ratekit.Decision{}, err
	}
	return s.decide(ctx, key, limits, cost, "take")
}

// Peek implements ratekit.Store.
func (s *Store) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	return s.decide(ctx, key, limits, 1, "peek")
}

// Reset implements ratekit.Store. It forgets blocks too.
func (s *Store) Reset(ctx context.Context, key string, limits []ratekit.Limit) error {
	keys, err := s.Keys(key, limits)
	if err != nil {
		return err
	}
	_, err = s.eval(ctx, keys, []any{0, "reset"})
	return err
}

func (s *Store) decide(ctx context.Context, key string, limits []ratekit.Limit, cost int64, mode string) (ratekit.Decision, error) {
	t, err := tag(key)
	if err != nil {
		return ratekit.Decision{}, err
	}
	if err := store.CheckLimits(limits); err != nil {
		return ratekit.Decision{}, err
	}
	keys := make([]string, len(limits), len(limits)+blocks(limits))
	args := make([]any, 2, 2+5*len(limits))
	args[0], args[1] = cost, mode
	for i, l := range limits {
		keys[i] = s.stateKey(t, l)
		p, err := s.params(l)
		if err != nil {
			return ratekit.Decision{}, err
		}
		args = append(args, string(l.Spec().Algorithm), p[0], p[1], p[2], l.Spec().Block.Milliseconds())
	}
	for _, l := range limits {
		if l.Spec().Block > 0 {
			keys = append(keys, s.blockKey(t, l))
		}
	}
	if suppressed(limits) {
		args = append(args, store.DrawBits(s.random()))
	}
	reply, err := s.eval(ctx, keys, args)
	if err != nil {
		return ratekit.Decision{}, err
	}
	states, err := parseReply(reply, limits)
	if err != nil {
		return ratekit.Decision{}, err
	}
	return store.Combine(states), nil
}

func blocks(limits []ratekit.Limit) int {
	n := 0
	for _, l := range limits {
		if l.Spec().Block > 0 {
			n++
		}
	}
	return n
}

// params returns the engine's three parameters for l.
func (s *Store) params(l ratekit.Limit) ([3]int64, error) {
	switch a := l.Spec().Algorithm; {
	case a == store.FixedWindow || a == store.SlidingLog:
		return [3]int64{l.Spec().Quota, l.Spec().Window.Milliseconds(), 0}, nil
	case a == store.SlidingWindow:
		return [3]int64{l.Spec().Quota, l.Spec().Window.Milliseconds(), l.Spec().Precision.Milliseconds()}, nil
	case a == store.GCRA || a == store.TokenBucket || a == store.LeakyBucket:
		return [3]int64{l.Spec().Interval.Microseconds(), l.Spec().Quota, l.Spec().MaxWait.Microseconds()}, nil
	case a == store.Suppressed:
		return [3]int64{l.Spec().Quota, l.Spec().Hard, l.Spec().Window.Milliseconds()}, nil
	case s.custom[a] != "":
		return l.Spec().Params, nil
	default:
		return [3]int64{}, unsupported(a)
	}
}
