package denycache

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
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
	maxEntries int
	nextSweep  atomic.Int64 // the cache's clock (ns) from which a call sweeps

	mu      sync.RWMutex
	sets    map[string]*limitSet // by their IDs, joined by 0
	entries map[entryKey]entry
	epoch   uint64 // bumped by every forget: a denial asked for before is not recorded
	peak    int    // the largest len(entries) since the map was built: Go maps never shrink
}

// entryKey identifies the entry of one subject (a subject.Key) and one
// limit set.
type entryKey struct {
	sub string
	set *limitSet
}

const (
	// sweepStep is how often (cache clock) a call sweeps, which is also how
	// a full cache makes room; each sweep looks at sweepBatch entries, so
	// none holds the lock for long: 64 a second cover DefaultMaxEntries.
	sweepStep  = int64(time.Second) / 64
	sweepBatch = 4096
	compactMin = 256 // the peak size below which the map is never rebuilt
)

var _ ratekit.Store = (*Store)(nil)

// New returns a Store in front of inner, with the options' settings: at
// most DefaultMaxEntries denials, DefaultMargin, the local monotonic clock.
// It starts no goroutine.
func New(inner ratekit.Store, opts ...Option) *Store {
	s := &Store{inner: inner, clock: elapsed.New(nil), margin: DefaultMargin, maxEntries: DefaultMaxEntries,
		sets: make(map[string]*limitSet), entries: make(map[entryKey]entry)}
	for _, o := range opts {
		o.apply(s)
	}
	return s
}

// Prepare implements ratekit.Store: it prepares limits on the inner store
// and wraps its form, which is a store.Settler when the inner one is.
func (s *Store) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	inner, err := s.inner.Prepare(limits)
	if err != nil {
		return nil, err
	}
	p := &prepared{s: s, inner: inner, limits: slices.Clone(limits), ids: make([]string, len(limits))}
	for i, l := range limits {
		p.ids[i] = l.Spec().ID
	}
	if set := s.setOf(limits, p.ids); set != nil && set.cacheable {
		p.set = set
	}
	if st, ok := inner.(store.Settler); ok {
		return &settling{prepared: p, inner: st}, nil
	}
	return p, nil
}

// maxSets bounds the limit sets a Store tells apart (a Limiter has one, or
// three with shadow limits); sets beyond it go to the store uncached.
const maxSets = 1024

// A limitSet is the identity of the limits of one prepared call: their
// Specs, so that limits with new numbers (which share their state, and so
// their IDs) are a new set. Sets are made by Prepare, once per identity,
// and never change.
type limitSet struct {
	ids       []string // each limit's Spec().ID, in order
	cacheable bool     // all of algorithms whose denials the cache understands
	maxCost   int64    // the smallest quota: a larger cost is unsatisfiable
	blocks    []int    // the indices of the limits with a penalty block
}

// setOf returns the set of limits, whose IDs are ids, made on first use;
// nil beyond maxSets.
func (s *Store) setOf(limits []ratekit.Limit, ids []string) *limitSet {
	var key strings.Builder
	for _, l := range limits {
		fmt.Fprintf(&key, "%+v\x00", l.Spec())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if set, ok := s.sets[key.String()]; ok {
		return set
	}
	if len(s.sets) >= maxSets {
		return nil
	}
	set := &limitSet{ids: ids, cacheable: true}
	for i, l := range limits {
		sp := l.Spec()
		set.cacheable = set.cacheable && algo.Of(sp.Algorithm).Caps()&algo.Cacheable != 0
		if i == 0 || sp.Quota < set.maxCost {
			set.maxCost = sp.Quota
		}
		if sp.Block > 0 {
			set.blocks = append(set.blocks, i)
		}
	}
	s.sets[key.String()] = set
	return set
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
	return p.decide(key, cost, func() (ratekit.Decision, error) { return p.inner.Take(ctx, key, cost) })
}

// Peek answers, and caches, as a Take of cost 1 would: a Peek denial is a
// Take denial that changed nothing.
func (p *prepared) Peek(ctx context.Context, key string) (ratekit.Decision, error) {
	return p.decide(key, 1, func() (ratekit.Decision, error) { return p.inner.Peek(ctx, key) })
}

// Reset forgets key's entries of every set that shares a limit with these
// limits, and resets the inner store.
func (p *prepared) Reset(ctx context.Context, key string) error {
	p.forget(key)
	err := p.inner.Reset(ctx, key)
	p.forget(key)
	return err
}

// Reserve is Take, asking the inner store to reserve.
func (p *settling) Reserve(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	return p.decide(key, cost, func() (ratekit.Decision, error) { return p.inner.Reserve(ctx, key, cost) })
}

// Settle settles through the inner store. A refund forgets key's cached
// denials of every set that shares a limit with these: it may let them
// pass sooner.
func (p *settling) Settle(ctx context.Context, key string, r *ratekit.Receipt, cost int64) error {
	refund := r != nil && cost < r.Cost
	err := p.inner.Settle(ctx, key, r, cost)
	if refund {
		p.forget(key)
	}
	return err
}

// Renew renews through the inner store.
func (p *settling) Renew(ctx context.Context, key string, r *ratekit.Receipt) (bool, error) {
	return p.inner.Renew(ctx, key, r)
}

// decide answers from the cache, or asks the inner store (ask) and caches
// its denial.
func (p *prepared) decide(key string, cost int64, ask func() (ratekit.Decision, error)) (ratekit.Decision, error) {
	set, s := p.set, p.s
	if set == nil || key == "" || cost < 0 || cost > set.maxCost {
		return ask()
	}
	sub := subject.Key(key)
	now := s.clock.Nanos()
	if n := s.nextSweep.Load(); now >= n && s.nextSweep.CompareAndSwap(n, now+sweepStep) {
		s.mu.Lock()
		s.sweep(now, sweepBatch)
		s.mu.Unlock()
	}
	s.mu.RLock()
	e, found := s.entries[entryKey{sub, set}]
	epoch := s.epoch
	s.mu.RUnlock()
	if found && e.serves(cost, now) {
		return e.decision(now), nil
	}
	d, err := ask()
	if err == nil {
		s.record(sub, set, cost, now, epoch, d, found)
	}
	return d, err
}

// record caches d, the inner store's answer asked at start, if it is a
// denial that may be repeated and nothing was forgotten since epoch. Else
// it drops sub's entry, if held, once expired or outdated by an admission.
func (s *Store) record(sub string, set *limitSet, cost, start int64, epoch uint64, d ratekit.Decision, held bool) {
	e, ok := newEntry(set, d, cost, start, s.margin)
	if !ok && !held {
		return
	}
	k := entryKey{sub, set}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, found := s.entries[k]
	switch {
	case !ok:
		if found && (start >= old.until || d.Allowed) {
			delete(s.entries, k)
		}
	case s.epoch != epoch:
	case found && start < old.until && !e.covers(old):
		// a live entry that answers more costs stays
	default:
		if found || len(s.entries) < s.maxEntries { // full: the calls' sweeps make room
			// The key's subject is a copy: the cache never holds the caller's memory.
			s.entries[entryKey{strings.Clone(sub), set}] = e
			s.peak = max(s.peak, len(s.entries))
		}
	}
}

// forget drops key's entries for every set that shares a limit with p's,
// and stops the denials asked for before from being recorded.
func (p *prepared) forget(key string) {
	if key == "" { // never cached; the inner store refuses it
		return
	}
	sub, s := subject.Key(key), p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	for _, set := range s.sets {
		if slices.ContainsFunc(set.ids, func(id string) bool { return slices.Contains(p.ids, id) }) {
			delete(s.entries, entryKey{sub, set})
		}
	}
}

// Len returns the number of denials the cache holds, expired ones
// included until they are swept.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.entries)
}

// Sweep drops every expired entry now and gives back the memory of a map
// that has shrunk well below its peak. The cache also sweeps by itself
// while calls arrive; Sweep is for a moment of your choosing, e.g. after
// stepping a fake clock.
func (s *Store) Sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(s.clock.Nanos(), len(s.entries))
}

// sweep drops the expired among up to n entries (from a random place) and
// rebuilds the map at a quarter of a peak of compactMin or more. The
// caller holds s.mu.
func (s *Store) sweep(now int64, n int) {
	for k, e := range s.entries {
		if n--; n < 0 {
			break
		}
		if now >= e.until {
			delete(s.entries, k)
		}
	}
	if s.peak >= compactMin && len(s.entries) <= s.peak/4 {
		m := make(map[entryKey]entry, len(s.entries))
		maps.Copy(m, s.entries)
		s.entries, s.peak = m, len(m)
	}
}
