package denycache

import (
	"context"
	"hash/maphash"
	"math"
	"slices"
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
// concurrent use.
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
	s := &Store{inner: inner, clock: elapsed.New(nil), margin: DefaultMargin, maxEntries: DefaultMaxEntries, seed: maphash.MakeSeed()}
	for _, o := range opts {
		o.apply(s)
	}
	for i := range s.shards {
		s.shards[i].m = make(map[entryKey]entry)
		s.shards[i].least = math.MaxInt64
	}
	return s
}

// Prepare implements ratekit.Store: it prepares limits on the inner store
// and returns a form that answers a denial that still holds from the cache
// and asks the inner store everything else, caching its denials. It is a
// store.Settler when the inner store's form is.
func (s *Store) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	inner, err := s.inner.Prepare(limits)
	if err != nil {
		return nil, err
	}
	p := &prepared{s: s, inner: inner, limits: slices.Clone(limits), ids: make([]string, len(limits))}
	for i, l := range limits {
		p.ids[i] = l.Spec().ID
	}
	if set := s.sets.find(limits); set != nil && set.cacheable {
		p.set = set
	}
	if st, ok := inner.(store.Settler); ok {
		return &settling{prepared: p, inner: st}, nil
	}
	return p, nil
}

// prepared is one set of limits on a Store; set is nil when the cache
// does not answer for them.
type prepared struct {
	s      *Store
	inner  ratekit.Prepared
	set    *limitSet
	limits []ratekit.Limit
	ids    []string
}

// settling is a prepared form whose inner form can settle.
type settling struct {
	*prepared
	inner store.Settler
}

var _ store.Settler = (*settling)(nil)

// Take answers from the cache a denial that still holds for cost, and
// otherwise asks the inner store, caching its denial.
func (p *prepared) Take(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	return p.decide(ctx, key, cost, func() (ratekit.Decision, error) { return p.inner.Take(ctx, key, cost) })
}

// Peek answers, and caches, as a Take of cost 1 would: a Peek denial is a
// Take denial that changed nothing.
func (p *prepared) Peek(ctx context.Context, key string) (ratekit.Decision, error) {
	return p.decide(ctx, key, 1, func() (ratekit.Decision, error) { return p.inner.Peek(ctx, key) })
}

// Reset forgets key's entries of every set that shares a limit with these
// limits, and resets the inner store.
func (p *prepared) Reset(ctx context.Context, key string) error {
	if key == "" {
		return p.inner.Reset(ctx, key)
	}
	sub := subject.Key(key)
	p.s.forget(sub, p.ids)
	err := p.inner.Reset(ctx, key)
	p.s.forget(sub, p.ids)
	return err
}

// Reserve is Take, asking the inner store to reserve.
func (p *settling) Reserve(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	return p.decide(ctx, key, cost, func() (ratekit.Decision, error) { return p.inner.Reserve(ctx, key, cost) })
}

// Settle settles through the inner store. A refund forgets key's cached
// denials of every set that shares a limit with these: it may let them
// pass sooner.
func (p *settling) Settle(ctx context.Context, key string, r *ratekit.Receipt, cost int64) error {
	refund := r != nil && cost < r.Cost
	err := p.inner.Settle(ctx, key, r, cost)
	if refund && key != "" {
		p.s.forget(subject.Key(key), p.ids)
	}
	return err
}

// Renew renews through the inner store.
func (p *settling) Renew(ctx context.Context, key string, r *ratekit.Receipt) (bool, error) {
	return p.inner.Renew(ctx, key, r)
}

// decide answers from the cache, or asks the inner store (ask) and caches
// its denial.
func (p *prepared) decide(ctx context.Context, key string, cost int64, ask func() (ratekit.Decision, error)) (ratekit.Decision, error) {
	set, s := p.set, p.s
	if set == nil || key == "" || cost < 0 || cost > set.maxCost {
		return ask()
	}
	sub := subject.Key(key)
	sh := s.shard(sub)
	now := s.clock.Nanos()
	s.maybeSweep(now)
	sh.mu.RLock()
	e, found := sh.m[entryKey{sub, set.num}]
	sh.mu.RUnlock()
	if found && e.serves(cost, now) {
		return e.decision(p.limits, now), nil
	}
	epoch := sh.epoch.Load()
	d, err := ask()
	if err == nil {
		s.record(sh, sub, set, cost, now, epoch, d, found && (now >= e.until || d.Allowed))
	}
	return d, err
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
		// The key's subject is a copy: the cache never holds the caller's memory.
		sh.m[entryKey{strings.Clone(sub), set.num}] = e
		sh.peak = max(sh.peak, len(sh.m))
		sh.least = min(sh.least, e.until)
	}
}

// forget drops sub's entries for every set that shares a limit with
// ids, and stops the denials asked for before from being recorded.
func (s *Store) forget(sub string, ids []string) {
	sh := s.shard(sub)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.epoch.Add(1)
	s.sets.sharing(ids, func(set *limitSet) { s.del(sh, entryKey{sub, set.num}) })
}

// shard returns the shard of sub, a subject.Key.
func (s *Store) shard(sub string) *shard {
	return &s.shards[maphash.String(s.seed, sub)%numShards]
}
