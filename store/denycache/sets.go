package denycache

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// maxSets bounds the limit sets a Store tells apart. A Limiter has one (or
// two, with shadow limits); calls with a set beyond the bound go to the
// store uncached.
const maxSets = 1024

// A limitSet is the identity of the limits of one call: the Spec().ID of
// each, in order. A limit's ID holds its name, algorithm and a fingerprint
// of its parameters, so a changed limit is a new set and is never answered
// from an old set's entries. Sets are interned once and never change.
type limitSet struct {
	num       uint32   // the set's number, part of every entry's key
	ids       []string // each limit's Spec().ID, in order
	cacheable bool     // valid limits, all of algorithms whose denials the cache understands
	maxCost   int64    // the smallest quota: a larger cost is unsatisfiable
	blocks    []int    // the indices of the limits with a penalty block
}

// sets interns limit sets. Lookups read an immutable table through an
// atomic pointer, taking no lock; additions copy it under mu.
type sets struct {
	seed  maphash.Seed
	mu    sync.Mutex
	table atomic.Pointer[setTable]
	full  atomic.Bool // maxSets reached: unknown sets are not added
}

type setTable struct {
	byHash map[uint64][]*limitSet
	all    []*limitSet
}

// find returns the interned set of limits, adding it if need be, or nil
// when there are maxSets sets already. It allocates only to add a set.
func (t *sets) find(limits []ratekit.Limit) *limitSet {
	var buf [8]string // the IDs, read once for hashing and comparing
	h := uint64(len(limits))
	for i, l := range limits {
		id := l.Spec().ID
		if i < len(buf) {
			buf[i] = id
		}
		h = (h ^ maphash.String(t.seed, id)) * 0x100000001b3
	}
	ids := buf[:min(len(limits), len(buf))]
	if tab := t.table.Load(); tab != nil {
		for _, s := range tab.byHash[h] {
			if s.is(limits, ids) {
				return s
			}
		}
	}
	if t.full.Load() {
		return nil
	}
	return t.add(h, limits, ids)
}

// is reports whether limits, whose first IDs are ids, make up s.
func (s *limitSet) is(limits []ratekit.Limit, ids []string) bool {
	if len(limits) != len(s.ids) {
		return false
	}
	for i, id := range s.ids {
		if i < len(ids) {
			if ids[i] != id {
				return false
			}
		} else if limits[i].Spec().ID != id {
			return false
		}
	}
	return true
}

// add interns limits, whose hash is h, unless the table is full.
func (t *sets) add(h uint64, limits []ratekit.Limit, ids []string) *limitSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.table.Load()
	if old == nil {
		old = &setTable{}
	}
	for _, s := range old.byHash[h] {
		if s.is(limits, ids) {
			return s
		}
	}
	if len(old.all) >= maxSets {
		t.full.Store(true)
		return nil
	}
	s := newSet(uint32(len(old.all)), limits)
	tab := &setTable{byHash: make(map[uint64][]*limitSet, len(old.byHash)+1), all: append(old.all[:len(old.all):len(old.all)], s)}
	for k, v := range old.byHash {
		tab.byHash[k] = v
	}
	tab.byHash[h] = append(old.byHash[h][:len(old.byHash[h]):len(old.byHash[h])], s)
	t.table.Store(tab)
	return s
}

// newSet describes limits. Denials are cached only for the kit's
// deterministic algorithms: a Suppressed limit declines by chance and
// counts declined calls, and a custom algorithm's denials promise nothing
// the cache can check.
func newSet(num uint32, limits []ratekit.Limit) *limitSet {
	s := &limitSet{num: num, ids: make([]string, len(limits)), cacheable: store.CheckLimits(limits) == nil}
	for i, l := range limits {
		sp := l.Spec()
		s.ids[i] = sp.ID
		switch sp.Algorithm {
		case store.FixedWindow, store.SlidingWindow, store.SlidingLog, store.TokenBucket, store.LeakyBucket, store.GCRA:
		default:
			s.cacheable = false
		}
		if i == 0 || sp.Quota < s.maxCost {
			s.maxCost = sp.Quota
		}
		if sp.Block > 0 {
			s.blocks = append(s.blocks, i)
		}
	}
	return s
}

// sharing calls f with every interned set that has a limit in limits.
func (t *sets) sharing(limits []ratekit.Limit, f func(*limitSet)) {
	tab := t.table.Load()
	if tab == nil {
		return
	}
	ids := make([]string, len(limits))
	for i, l := range limits {
		ids[i] = l.Spec().ID
	}
	for _, s := range tab.all {
		if s.shares(ids) {
			f(s)
		}
	}
}

// shares reports whether one of ids is in s.
func (s *limitSet) shares(ids []string) bool {
	for _, id := range ids {
		for _, sid := range s.ids {
			if sid == id {
				return true
			}
		}
	}
	return false
}
