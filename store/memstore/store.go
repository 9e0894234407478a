package memstore

import (
	"context"
	"hash/maphash"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

const (
	numShards       = 64
	sweepIntervalMS = 1000
)

// Store is an in-process ratekit.Store. The zero value is not usable; build it
// with New. It is safe for concurrent use.
type Store struct {
	now    func() time.Time
	random func() float64 // uniform draws in [0, 1) for Suppressed limits
	seed   maphash.Seed
	shards [numShards]shard
}

type shard struct {
	mu          sync.Mutex
	entries     map[entryKey]entry
	reps        map[entryKey]repState // reputations, keyed by tenant and policy ID
	nextSweepMS int64
}

// entryKey identifies one limit's state, or its block, for one subject.
type entryKey struct {
	subject, limit string
	block          bool
}

// entry is one limit's state: a count or a theoretical arrival time, and the
// millisecond at which it expires. Like a Redis key, it lives through that
// millisecond (Redis expires a key when now > its expiry time).
type entry struct {
	value    int64    // a count, or a theoretical arrival time in µs
	expireMS int64    // like a Redis key's expiry time
	buckets  []bucket // SlidingWindow: counts by bucket, oldest first
	log      []int64  // SlidingLog: admitted requests in µs; a Lockout's attempts
	blocks   []int64  // Lockout: each window's block expiry in ms
}

// bucket is one SlidingWindow or Suppressed bucket: its index (ms / width),
// its count, and (Suppressed) how many of those calls were admitted.
type bucket struct{ idx, n, a int64 }

// Option configures a Store.
type Option func(*Store)

// WithClock makes the store read time from now instead of time.Now. Tests use
// it to step time deterministically.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// WithRandom sets the source of the uniform draws in [0, 1) that decide
// calls of Suppressed limits in their probabilistic range (default
// math/rand/v2's Float64); it must be safe for concurrent use. Given the same
// draws and clock, memstore and redisstore decide alike.
func WithRandom(f func() float64) Option {
	return func(s *Store) {
		if f != nil {
			s.random = f
		}
	}
}

// New returns an empty Store.
func New(opts ...Option) *Store {
	s := &Store{now: time.Now, random: rand.Float64, seed: maphash.MakeSeed()}
	for _, o := range opts {
		o(s)
	}
	for i := range s.shards {
		s.shards[i].entries = make(map[entryKey]entry)
		s.shards[i].reps = make(map[entryKey]repState)
	}
	return s
}

// Take implements ratekit.Store.
func (s *Store) Take(_ context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	return s.decide(key, limits, cost, cost > 0)
}

// Peek implements ratekit.Store.
func (s *Store) Peek(_ context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	return s.decide(key, limits, 1, false)
}

// Reset implements ratekit.Store.
func (s *Store) Reset(_ context.Context, key string, limits []ratekit.Limit) error {
	if key == "" {
		return ratekit.ErrEmptyKey
	}
	sh := s.shard(key)
	sh.mu.Lock()
	for _, l := range limits {
		delete(sh.entries, entryKey{key, l.Spec().ID, false})
		delete(sh.entries, entryKey{key, l.Spec().ID, true})
	}
	sh.mu.Unlock()
	return nil
}

// Len returns the number of live state entries (swept lazily); for tests and
// metrics.
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}

func (s *Store) decide(key string, limits []ratekit.Limit, cost int64, charge bool) (ratekit.Decision, error) {
	if key == "" {
		return ratekit.Decision{}, ratekit.ErrEmptyKey
	}
	if err := store.CheckCost(cost); err != nil {
		return ratekit.Decision{}, err
	}
	if err := store.CheckLimits(limits); err != nil {
		return ratekit.Decision{}, err
	}
	var draw int64
	for _, l := range limits {
		if l.Spec().Algorithm == store.Suppressed {
			draw = store.DrawBits(s.random()) // one per call, as redisstore
			break
		}
	}
	nowUS := s.now().UnixMicro()
	nowMS := nowUS / 1000
	states := make([]ratekit.LimitState, len(limits))
	var nextBuf [4]entry
	next := nextBuf[:0]

	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.sweep(nowMS)
	allowed := true
	for i, l := range limits {
		st, n, err := sh.checkLimit(key, l, cost, charge, nowUS, draw)
		if err != nil {
			return ratekit.Decision{}, err
		}
		states[i] = st
		next = append(next, n)
		allowed = allowed && st.Allowed
	}
	if !allowed && charge {
		// Nothing is charged: report each admitting limit as it stands. A
		// Suppressed limit counts the call anyway, as declined.
		for i, l := range limits {
			switch {
			case l.Spec().Algorithm == store.Suppressed:
				if len(next[i].buckets) > 0 {
					sh.entries[entryKey{key, l.Spec().ID, false}] = next[i]
				}
			case states[i].Allowed:
				states[i], _, _ = sh.checkLimit(key, l, cost, false, nowUS, draw)
			}
		}
	}
	if allowed && charge {
		for i, l := range limits {
			if l.Spec().Algorithm == store.Suppressed {
				next[i].buckets[len(next[i].buckets)-1].a += cost // the call's bucket is last
			}
			sh.entries[entryKey{key, l.Spec().ID, false}] = next[i]
		}
	}
	return store.Combine(states), nil
}

func (s *Store) shard(key string) *shard {
	return &s.shards[maphash.String(s.seed, key)%numShards]
}

// checkLimit decides one limit, honouring and setting its block as the
// engine does: a live block denies; a denial (not an unsatisfiable one) by a
// limit with a block starts the block when charging.
func (sh *shard) checkLimit(key string, l ratekit.Limit, cost int64, charge bool, nowUS, draw int64) (ratekit.LimitState, entry, error) {
	nowMS := nowUS / 1000
	block := l.Spec().Block.Milliseconds()
	if block > 0 {
		if b, ok := sh.live(entryKey{key, l.Spec().ID, true}, nowMS); ok && b.expireMS > nowMS {
			left := ms(b.expireMS - nowMS)
			return ratekit.LimitState{Limit: l, ResetAfter: left, RetryAfter: left, Blocked: true}, entry{}, nil
		}
	}
	e, ok := sh.live(entryKey{key, l.Spec().ID, false}, nowMS)
	st, n, err := check(l, e, ok, cost, charge, nowUS, draw)
	drawn := st.Suppression > 0 && st.Suppression < 1 // declined by a draw: no block
	if err == nil && block > 0 && !st.Allowed && !st.Unsatisfiable && !drawn && charge {
		sh.entries[entryKey{key, l.Spec().ID, true}] = entry{expireMS: nowMS + block}
		st.RetryAfter, st.ResetAfter, st.Blocked = max(st.RetryAfter, ms(block)), max(st.ResetAfter, ms(block)), true
	}
	return st, n, err
}

// live returns the entry for k if it has not expired at nowMS.
func (sh *shard) live(k entryKey, nowMS int64) (entry, bool) {
	e, ok := sh.entries[k]
	if !ok || e.expireMS < nowMS {
		return entry{}, false
	}
	return e, true
}

// sweep drops expired entries, at most once per sweep interval.
func (sh *shard) sweep(nowMS int64) {
	if nowMS < sh.nextSweepMS {
		return
	}
	sh.nextSweepMS = nowMS + sweepIntervalMS
	for k, e := range sh.entries {
		if e.expireMS < nowMS {
			delete(sh.entries, k)
		}
	}
	for k, r := range sh.reps {
		if r.expireMS < nowMS {
			delete(sh.reps, k)
		}
	}
}
