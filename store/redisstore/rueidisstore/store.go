package rueidisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/redisengine"
)

// Store is a ratekit.Store (and a reputation.Store) backed by Redis through a
// rueidis.Client. It is safe for concurrent use. Build it with New; the zero
// Store is not usable.
type Store struct {
	rep redisengine.Extras // the reputation methods

	client rueidis.Client
	eng    *redisengine.Engine
}

var (
	_ ratekit.Store    = (*Store)(nil)
	_ reputation.Store = (*Store)(nil)
)

// An Option configures a Store; build one with a With… function.
type Option interface{ apply(*redisengine.Options) }

// optionFunc adapts a function to Option.
type optionFunc func(*redisengine.Options)

func (f optionFunc) apply(o *redisengine.Options) { f(o) }

// WithPrefix sets the first segment of every key (default "ratekit"): 1 to
// 32 printable ASCII characters without space or braces.
func WithPrefix(prefix string) Option {
	return optionFunc(func(o *redisengine.Options) { o.Prefix = prefix })
}

// WithAlgorithm registers a custom algorithm, run by limits built with
// ratekit.Custom(name, …): a Lua function following the engine's contract
// (see redisstore.WithAlgorithm).
func WithAlgorithm(name, source string) Option {
	return optionFunc(func(o *redisengine.Options) {
		if o.Algorithms == nil {
			o.Algorithms = map[string]string{}
		}
		o.Algorithms[name] = source
	})
}

// WithRandom sets the source of uniform draws in [0, 1) for Suppressed
// limits (default math/rand/v2's Float64); it must be safe for concurrent
// use.
func WithRandom(f func() float64) Option {
	return optionFunc(func(o *redisengine.Options) { o.Random = f })
}

// New returns a Store that decides through client. It sends nothing to
// Redis; call Ping at start to learn whether Redis answers.
func New(client rueidis.Client, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("ratekit: rueidisstore: nil client")
	}
	o := redisengine.Options{Name: "rueidisstore", Explain: explain}
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	eng, err := redisengine.New(o)
	if err != nil {
		return nil, err
	}
	s := &Store{client: client, eng: eng}
	s.rep = redisengine.Extras{Engine: eng, Conn: (*conn)(s)}
	return s, nil
}

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

// Keys returns the Redis keys that hold subject's state for limits: one
// state key per limit in order, then a block key per limit with a block.
func (s *Store) Keys(subject string, limits []ratekit.Limit) ([]string, error) {
	return s.eng.Keys(subject, limits)
}

// Ping sends PING to every node and returns an error naming the cause when
// Redis does not answer; then, as redisstore's Ping does, it tries every kind
// of call the engine makes on each master (one where CLUSTER SLOTS is refused).
func (s *Store) Ping(ctx context.Context) error {
	for addr, node := range s.client.Nodes() {
		if err := node.Do(ctx, node.B().Ping().Build()).Error(); err != nil {
			return fmt.Errorf("ratekit: rueidisstore: cannot reach Redis at %s: %w", addr, err)
		}
	}
	for _, sub := range s.probeSubjects(ctx) {
		if err := s.eng.Probe(ctx, s, sub); err != nil {
			return fmt.Errorf("ratekit: rueidisstore: %w", err)
		}
	}
	return nil
}

// probeSubjects returns one probe subject per master: on a cluster, one
// whose hash tag (the subject itself) falls in each master's slots, as
// CLUSTER SLOTS lists them; elsewhere one.
func (s *Store) probeSubjects(ctx context.Context) []string {
	subject := redisengine.ProbeSubject
	ranges, err := s.client.Do(ctx, s.client.B().ClusterSlots().Build()).ToArray()
	if err != nil || len(ranges) == 0 { // not a cluster
		return []string{subject(0)}
	}
	type slots struct{ from, to int64 }
	owners := map[string][]slots{}
	for _, r := range ranges {
		f, err := r.ToArray()
		if err != nil || len(f) < 3 {
			continue
		}
		from, _ := f[0].AsInt64()
		to, _ := f[1].AsInt64()
		node, _ := f[2].ToArray()
		if len(node) < 2 {
			continue
		}
		host, _ := node[0].ToString()
		port, _ := node[1].AsInt64()
		addr := host + ":" + strconv.FormatInt(port, 10)
		owners[addr] = append(owners[addr], slots{from, to})
	}
	var out []string
	for _, rs := range owners {
		for i := 0; i < 64*len(owners); i++ {
			cmd := s.client.B().Get().Key("{" + subject(i) + "}").Build()
			slot := int64(cmd.Slot())
			if slices.ContainsFunc(rs, func(r slots) bool { return slot >= r.from && slot <= r.to }) {
				out = append(out, subject(i))
				break
			}
		}
	}
	return out
}

// explain turns the engine's failure (never nil) into the store's error:
// when ctx ended, it names ctx's error and the last failure behind it.
func explain(ctx context.Context, _ time.Time, err error) error {
	var re *redisengine.RunError
	if !errors.As(err, &re) {
		return err
	}
	ctxErr := ctx.Err()
	if d, ok := ctx.Deadline(); ok && ctxErr == nil && !time.Now().Before(d) {
		ctxErr = context.DeadlineExceeded
	}
	if ctxErr == nil || errors.Is(re.Err, ctxErr) {
		return fmt.Errorf("ratekit: rueidisstore: %w", re.Err)
	}
	return fmt.Errorf("ratekit: rueidisstore: %w (last error: %w)", ctxErr, re.Err)
}
