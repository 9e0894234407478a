package redisstore

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
)

//go:embed lua/engine.lua
var engineSource string

var engine = redis.NewScript(engineSource)

// DefaultPrefix starts every key unless WithPrefix says otherwise.
const DefaultPrefix = "ratekit"

// Store is a ratekit.Store backed by Redis. It is safe for concurrent use.
type Store struct {
	proc   processor
	prefix string
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
// not stop its retries from charging twice.
func New(client redis.Scripter, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errNilClient
	}
	proc, ok := client.(processor)
	if !ok {
		return nil, fmt.Errorf("ratekit: redisstore: %T has no Process method; pass a go-redis client", client)
	}
	s := &Store{proc: proc, prefix: DefaultPrefix}
	for _, o := range opts {
		o(s)
	}
	if err := validatePrefix(s.prefix); err != nil {
		return nil, err
	}
	return s, nil
}

// Take implements ratekit.Store.
func (s *Store) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	if err := ratekit.ValidateCost(cost); err != nil {
		return ratekit.Decision{}, err
	}
	return s.decide(ctx, key, limits, cost, "take")
}

// Peek implements ratekit.Store.
func (s *Store) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	return s.decide(ctx, key, limits, 1, "peek")
}

// Reset implements ratekit.Store.
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
	if err := ratekit.CheckDistinct(limits); err != nil {
		return ratekit.Decision{}, err
	}
	keys := make([]string, len(limits))
	args := make([]any, 2, 2+3*len(limits))
	args[0], args[1] = cost, mode
	for i, l := range limits {
		keys[i] = s.stateKey(t, l)
		p1, p2, err := params(l)
		if err != nil {
			return ratekit.Decision{}, err
		}
		args = append(args, string(l.Algorithm()), p1, p2)
	}
	reply, err := s.eval(ctx, keys, args)
	if err != nil {
		return ratekit.Decision{}, err
	}
	states, err := parseReply(reply, limits)
	if err != nil {
		return ratekit.Decision{}, err
	}
	return ratekit.Combine(states), nil
}

// params returns the engine's two parameters for l.
func params(l ratekit.Limit) (int64, int64, error) {
	switch l.Algorithm() {
	case ratekit.AlgFixedWindow:
		return l.Burst(), l.Window().Milliseconds(), nil
	case ratekit.AlgGCRA:
		return l.Interval().Microseconds(), l.Burst(), nil
	default:
		return 0, 0, unsupported(l.Algorithm())
	}
}
