package memstore

import (
	"context"
	"errors"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/internal/wallclock"
	"github.com/ratekit/ratekit/store"
)

const (
	numShards       = 64
	sweepIntervalMS = 1000 // a call sweeps its shard at most this often (store clock)
)

// ErrFull is the error of a reputation call that would add an entry to a
// full store (see WithMaxEntries); rate-limit calls are denied instead.
var ErrFull = errors.New("ratekit: memstore: the store is full (WithMaxEntries)")

// Store is an in-process ratekit.Store and store.Settler, and a
// reputation.Store. The zero value is not usable: build a Store with New. A
// Store is safe for concurrent use; a call locks the one shard (of 64) of its
// subject. Close stops its background sweeper, as does the garbage collector
// once the Store is unreachable.
type Store struct {
	now         func() time.Time // WithClock's clock; without it, the wall clock
	ownClock    bool             // WithClock: the sweeper does not call now
	seenMS      atomic.Int64     // with ownClock, the latest ms read from now
	random      func() float64   // uniform draws in [0, 1) for Suppressed limits
	seed        maphash.Seed
	maxEntries  int64              // WithMaxEntries (DefaultMaxEntries); 0: unbounded
	count       atomic.Int64       // entries and reputations held, as admit counts them
	sweepEvery  time.Duration      // the background sweeper's period, in real time
	kick        chan struct{}      // asks the sweeper for an early sweep
	stopSweeper context.CancelFunc // stops the background sweeper (Close, or the cleanup)
	sweeperDone chan struct{}      // closed when it has returned
	leases      atomic.Int64       // the last InFlight lease id handed out
	shards      [numShards]shard
}

// A shard is one of a Store's 64 locks (mu) and the state it guards.
type shard struct {
	mu                     sync.Mutex
	subjects               map[string][]slot      // limit state, by subject (see slot)
	reps                   map[entryKey]repState  // reputations, by tenant and policy ID
	overrides              map[entryKey]*override // by subject and limit ID
	held                   int                    // the entries in subjects' slots (see slot)
	pend                   []pending              // the scratch of the call that holds mu (see run)
	nextSweepMS            int64                  // when a call sweeps the shard again (store clock)
	minExpireMS            int64                  // at most every expiry in the shard: a sweep before it drops nothing
	peakSubjects, peakReps int                    // the maps' largest sizes since they were built (see rebuilt)
}

// entryKey identifies a reputation's state for one tenant (subject.Key's).
type entryKey struct {
	subject, id string
}

// Option configures a Store.
type Option interface{ apply(*Store) }

type optionFunc func(*Store)

func (f optionFunc) apply(s *Store) { f(s) }

// WithClock makes the store read time from now instead of time.Now, for
// tests. The background sweeper never calls now (a test's clock is often not
// safe for concurrent use): it drops what has expired by the latest time a
// call or Sweep read from now, so call Sweep after stepping the clock.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(s *Store) { s.now, s.ownClock = now, true })
}

// WithRandom sets the source, safe for concurrent use, of the uniform draws
// in [0, 1) of Suppressed limits (default math/rand/v2's Float64). Given the
// same draws and clock, memstore and redisstore decide alike.
func WithRandom(f func() float64) Option {
	return optionFunc(func(s *Store) {
		if f != nil {
			s.random = f
		}
	})
}

// DefaultMaxEntries is the bound of a Store built without WithMaxEntries:
// 262,144 entries, about 60 MiB of heap at the 230 bytes an entry of one
// limit and one short subject costs (TestHeapPerEntry).
const DefaultMaxEntries = 1 << 18

// WithMaxEntries bounds the entries the store holds to n (default
// DefaultMaxEntries; n <= 0: unbounded). An entry is one limit's state for
// one subject, one active block, or one reputation policy's state for one
// tenant; Len counts them.
//
// A call that would add an entry to a full store first sweeps its subject's
// shard, then evicts the admitting limit states there that expire first
// (never a block, a denying state or a reputation), which lets their subject
// pass at most quota−1 more requests in that window. When nothing can be
// evicted, the call is denied with nothing charged and a Retry-After of at
// most a second, whatever the error policy; a reputation call fails with
// ErrFull. Blocks are stored even past the bound (they can at most double
// n). See docs/architecture.md#memstore.
func WithMaxEntries(n int) Option {
	return optionFunc(func(s *Store) { s.maxEntries = int64(max(n, 0)) })
}

// New returns an empty Store and starts its background sweeper (see Store).
func New(opts ...Option) *Store {
	s := &Store{random: rand.Float64, seed: maphash.MakeSeed(), sweepEvery: time.Second, maxEntries: DefaultMaxEntries}
	for _, o := range opts {
		if o != nil {
			o.apply(s)
		}
	}
	for i := range s.shards {
		s.shards[i].subjects = make(map[string][]slot)
		s.shards[i].reps = make(map[entryKey]repState)
		s.shards[i].minExpireMS = math.MaxInt64
	}
	s.kick = make(chan struct{}, 1)
	startSweeper(s)
	return s
}

var _ store.NonBlocking = (*Store)(nil)

// NonBlocking implements store.NonBlocking: a call waits only for its
// shard's lock.
func (s *Store) NonBlocking() bool { return true }

// Len returns the number of entries the store holds, as WithMaxEntries
// counts them; expired ones count until swept. For tests and metrics.
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += sh.held + len(sh.reps)
		sh.mu.Unlock()
	}
	return n
}

// clock reads the store's clock in µs, recording WithClock's latest ms for
// the sweeper.
func (s *Store) clock() int64 {
	if !s.ownClock {
		return wallclock.UnixMicro() // BenchmarkAllow: time.Now reads two clocks, ~13% of a decision (CPU time)
	}
	nowUS := s.now().UnixMicro()
	for nowMS := nowUS / 1000; ; {
		seen := s.seenMS.Load()
		if nowMS <= seen || s.seenMS.CompareAndSwap(seen, nowMS) {
			return nowUS
		}
	}
}

// shard returns the shard of sub, a subject as returned by subject.Key.
func (s *Store) shard(sub string) *shard {
	return &s.shards[maphash.String(s.seed, sub)%numShards]
}

// lock returns the subject of key and its shard, locked and swept if a
// sweep is due at nowMS.
func (s *Store) lock(key string, nowMS int64) (string, *shard) {
	sub := subject.Key(key)
	sh := s.shard(sub)
	sh.mu.Lock()
	if nowMS >= sh.nextSweepMS {
		s.sweep(sh, nowMS)
	}
	return sub, sh
}
