package denycache

import (
	"context"
	"hash/maphash"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/elapsed"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/store"
)

// Store is a ratekit.Store that answers a denied subject in-process until
// its Retry-After, and asks the inner store everything else (see the
// package doc for what it caches and what it promises).
//
// The zero value is not usable: build a Store with New. A Store is safe for
// concurrent use. Its entries are held in 64 shards by subject; a cached
// answer takes one shard's read lock and allocates only the States of the
// Decision it returns.
type Store struct {
	inner      ratekit.Store
	clock      elapsed.Clock // WithClock, or the monotonic clock; counts from New
	margin     time.Duration
	maxEntries int64
	count      atomic.Int64 // entries held, across shards
	seed       maphash.Seed
	sets       sets
	nextSweep  atomic.Int64  // the cache's clock (ns) at which a call sweeps the next shard
	nextFull   atomic.Int64  // the cache's clock (ns) from which a full cache may sweep every shard
	cursor     atomic.Uint32 // the shard swept next
	shards     [numShards]shard
}

var _ ratekit.Store = (*Store)(nil)

// New returns a Store in front of inner, with the options' settings: at
// most DefaultMaxEntries denials, DefaultMargin, the local monotonic clock.
// It starts no goroutine.
func New(inner ratekit.Store, opts ...Option) *Store {
	c := config{maxEntries: DefaultMaxEntries, margin: DefaultMargin}
	for _, o := range opts {
		o.apply(&c)
	}
	s := &Store{inner: inner, clock: elapsed.New(c.now), margin: c.margin, maxEntries: int64(c.maxEntries), seed: maphash.MakeSeed()}
	s.sets.seed = s.seed
	for i := range s.shards {
		s.shards[i].m = make(map[entryKey]entry)
		s.shards[i].least = math.MaxInt64
	}
	return s
}

// Take implements ratekit.Store: it answers from the cache a denial that
// still holds for cost, and otherwise asks the inner store, caching its
// denial.
func (s *Store) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	return s.decide(ctx, key, limits, cost, opTake)
}

// Peek implements ratekit.Store. It answers, and caches, as a Take of cost
// 1 would: a Peek denial is a Take denial that changed nothing.
func (s *Store) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	return s.decide(ctx, key, limits, 1, opPeek)
}

// Reset implements ratekit.Store: it drops the cached denials of key that
// involve any of limits, then resets the inner store. A denial the inner
// store made before the reset and returned after it is not cached.
func (s *Store) Reset(ctx context.Context, key string, limits []ratekit.Limit) error {
	if key == "" {
		return s.inner.Reset(ctx, key, limits)
	}
	sub := subject.Key(key)
	sh := s.shard(sub)
	s.forget(sh, sub, limits)
	err := s.inner.Reset(ctx, key, limits)
	s.forget(sh, sub, limits)
	return err
}

// decide answers a Take of cost (or a Peek) from the cache, or asks the
// inner store and records its denial.
func (s *Store) decide(ctx context.Context, key string, limits []ratekit.Limit, cost int64, op op) (ratekit.Decision, error) {
	set := s.sets.find(limits)
	if set == nil || !set.cacheable || key == "" || cost < 0 || cost > set.maxCost {
		return s.ask(ctx, key, limits, cost, op)
	}
	sub := subject.Key(key)
	sh := s.shard(sub)
	now := s.clock.Nanos()
	s.maybeSweep(now)
	sh.mu.RLock()
	e, found := sh.m[entryKey{sub, set.num}]
	sh.mu.RUnlock()
	if found && e.serves(cost, now) {
		return e.decision(limits, now), nil
	}
	epoch := sh.epoch.Load()
	d, err := s.ask(ctx, key, limits, cost, op)
	if err == nil {
		s.record(sh, sub, set, cost, now, epoch, d, found && (now >= e.until || d.Allowed))
	}
	return d, err
}

// An op is what a call asks the inner store.
type op uint8

const (
	opTake op = iota
	opPeek
	opReserve
)

// ask asks the inner store.
func (s *Store) ask(ctx context.Context, key string, limits []ratekit.Limit, cost int64, o op) (ratekit.Decision, error) {
	switch o {
	case opPeek:
		return s.inner.Peek(ctx, key, limits)
	case opReserve:
		st, ok := s.inner.(store.Settler)
		if !ok {
			return ratekit.Decision{}, errNotSettler
		}
		return st.Reserve(ctx, key, limits, cost)
	}
	return s.inner.Take(ctx, key, limits, cost)
}

// record caches d, the inner store's answer asked at start, if it is a
// denial that may be repeated and no Reset of the shard began since epoch
// was read; stale reports that the lookup found sub's entry expired, or
// outdated by d, an admission (of a smaller cost: the entry's Remaining is
// no longer true), and drops it.
func (s *Store) record(sh *shard, sub string, set *limitSet, cost, start int64, epoch uint64, d ratekit.Decision, stale bool) {
	e, ok := newEntry(set, d, cost, start, s.margin)
	if !ok && !stale {
		return
	}
	if ok {
		s.makeRoom(start)
	}
	k := entryKey{sub, set.num}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	old, found := sh.m[k]
	switch {
	case !ok:
		if found && (start >= old.until || d.Allowed) {
			s.del(sh, k)
		}
	case sh.epoch.Load() != epoch:
	case found && start < old.until && !e.covers(old):
		// a live entry that answers more costs stays
	case found || s.reserve(sh, start):
		sh.put(entryKey{strings.Clone(sub), set.num}, e)
	}
}

// forget drops sub's entries for every set that shares a limit with
// limits, and stops the denials asked for before from being recorded.
func (s *Store) forget(sh *shard, sub string, limits []ratekit.Limit) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.epoch.Add(1)
	s.sets.sharing(limits, func(set *limitSet) { s.del(sh, entryKey{sub, set.num}) })
}

// shard returns the shard of sub, a subject as returned by subject.
func (s *Store) shard(sub string) *shard {
	return &s.shards[maphash.String(s.seed, sub)%numShards]
}
