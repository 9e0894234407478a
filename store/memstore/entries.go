package memstore

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ratekit/ratekit/internal/algo"
)

const (
	evictScan  = 64  // how many subjects of a shard a full store looks at for state to evict
	compactMin = 256 // the peak size below which a map is never rebuilt: it costs little
)

// A slot is one limit's state and block for one subject; a subject's slots
// are its value in the shard's map. The state and the block are each an
// entry (see WithMaxEntries) and, like Redis keys, live through their expiry
// millisecond.
type slot struct {
	id      string     // the limit's Spec().ID
	state   algo.State // the limit's state, when has
	has     bool
	full    bool  // the last decision left nothing: a state never evicted (see evict)
	blockMS int64 // the block's expiry; 0: no block
}

// entries counts the entries sl holds.
func (sl *slot) entries() int {
	n := 0
	if sl.has {
		n++
	}
	if sl.blockMS != 0 {
		n++
	}
	return n
}

// find returns the index of the slot of id in slots, or -1.
func find(slots []slot, id string) int {
	for i := range slots {
		if slots[i].id == id {
			return i
		}
	}
	return -1
}

// live returns the index of the slot of id in slots (-1: none) and its
// state if it lives at nowMS.
func live(slots []slot, id string, nowMS int64) (int, *algo.State) {
	i := find(slots, id)
	if i >= 0 && slots[i].has && slots[i].state.ExpireMS >= nowMS {
		return i, &slots[i].state
	}
	return i, nil
}

// slotOf returns sub's slots (as the caller last read them), updated as they
// are in sh, and the index of the slot of id, adding one if need be.
func (sh *shard) slotOf(sub string, slots []slot, id string) ([]slot, int) {
	if i := find(slots, id); i >= 0 {
		return slots, i
	}
	if len(slots) == 0 {
		slots = make([]slot, 0, 1) // most subjects have state for one limit
		sh.peakSubjects = max(sh.peakSubjects, len(sh.subjects)+1)
	}
	slots = append(slots, slot{id: id})
	sh.subjects[strings.Clone(sub)] = slots // sub may be part of a larger string (a request body)
	return slots, len(slots) - 1
}

// setState stores *e as the state of id for sub, full when it leaves
// nothing, and returns sub's slots; the caller has counted a new entry.
func (sh *shard) setState(sub string, slots []slot, id string, e *algo.State, full bool) []slot {
	slots, i := sh.slotOf(sub, slots, id)
	sl := &slots[i]
	if !sl.has {
		sl.has = true
		sh.held++
	}
	sl.state, sl.full = *e, full
	sh.minExpireMS = min(sh.minExpireMS, e.ExpireMS)
	return slots
}

// setBlock blocks id for sub until expireMS, past the bound if need be, and
// returns sub's slots as they now are.
func (s *Store) setBlock(sh *shard, sub string, slots []slot, id string, expireMS int64) []slot {
	slots, i := sh.slotOf(sub, slots, id)
	if slots[i].blockMS == 0 {
		sh.held++
		s.count.Add(1)
	}
	slots[i].blockMS = expireMS
	sh.minExpireMS = min(sh.minExpireMS, expireMS)
	return slots
}

// drop lets f clear what it drops of each of sub's slots (has, blockMS),
// deletes sub when none holds an entry any more, and accounts for the
// entries dropped. A slot left empty stays, for its limit's next state.
func (s *Store) drop(sh *shard, sub string, f func(*slot)) {
	slots := sh.subjects[sub]
	n, left := 0, 0
	for i := range slots {
		sl := &slots[i]
		n += sl.entries()
		f(sl)
		if !sl.has {
			sl.state = algo.State{} // frees a dropped state's buckets or log
		}
		left += sl.entries()
	}
	if left == 0 {
		delete(sh.subjects, sub)
	}
	if n > left { // one atomic write per drop, none per subject swept in vain
		sh.held -= n - left
		s.count.Add(int64(left - n))
	}
}

// forget drops the state and the block of id for sub.
func (s *Store) forget(sh *shard, sub, id string) {
	s.drop(sh, sub, func(sl *slot) {
		if sl.id == id {
			sl.has, sl.blockMS = false, 0
		}
	})
}

// sweep drops sh's expired entries and reputations, and rebuilds a map that
// has shrunk (see rebuilt); it returns the number of entries dropped.
func (s *Store) sweep(sh *shard, nowMS int64) int {
	sh.nextSweepMS = nowMS + sweepIntervalMS
	before := sh.held + len(sh.reps)
	if sh.minExpireMS < nowMS { // something may have expired
		low := int64(math.MaxInt64)
		for sub := range sh.subjects {
			s.drop(sh, sub, func(sl *slot) {
				sl.has = sl.has && sl.state.ExpireMS >= nowMS
				if sl.blockMS < nowMS {
					sl.blockMS = 0
				}
				if sl.has {
					low = min(low, sl.state.ExpireMS)
				}
				if sl.blockMS != 0 {
					low = min(low, sl.blockMS)
				}
			})
		}
		for k, r := range sh.reps {
			if r.expireMS < nowMS {
				s.forgetRep(sh, k)
			} else {
				low = min(low, r.expireMS)
			}
		}
		sh.minExpireMS = low
	}
	sh.subjects, sh.peakSubjects = rebuilt(sh.subjects, sh.peakSubjects)
	sh.reps, sh.peakReps = rebuilt(sh.reps, sh.peakReps)
	return before - sh.held - len(sh.reps)
}

// rebuilt returns m and its peak, or, Go maps never shrinking, a copy of m
// once it holds a quarter or less of a peak of at least compactMin.
func rebuilt[K comparable, V any](m map[K]V, peak int) (map[K]V, int) {
	if peak < compactMin || len(m) > peak/4 {
		return m, peak
	}
	c := make(map[K]V, len(m))
	maps.Copy(c, m)
	return c, len(c)
}

// room reports whether the states p keeps of rules may be stored for sub:
// they exist, or the store can admit them (see admit).
func (s *Store) room(sh *shard, sub string, rules []rule, p []pending, nowMS int64) bool {
	return s.admit(sh, sub, nowMS, func() int { return missing(sh.subjects[sub], rules, p) })
}

// missing counts the limits of rules whose states p keeps and that have
// no state among a subject's slots: the entries that storing them adds.
func missing(slots []slot, rules []rule, p []pending) int {
	n := 0
	for i := range p {
		if !p[i].keep {
			continue
		}
		if j := find(slots, rules[i].spec.ID); j < 0 || !slots[j].has {
			n++
		}
	}
	return n
}

// admit counts the entries need says a call about sub adds to sh, sweeping
// sh or evicting to make room; else it wakes the sweeper and reports false.
// The caller reads its subject's slots again.
func (s *Store) admit(sh *shard, sub string, nowMS int64, need func() int) bool {
	ok := s.reserve(need()) ||
		s.sweep(sh, nowMS) > 0 && s.reserve(need()) ||
		s.evict(sh, sub, need()) > 0 && s.reserve(need())
	if !ok {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return ok
}

// reserve counts n more entries if that keeps the store within its bound.
func (s *Store) reserve(n int) bool {
	for n > 0 {
		c := s.count.Load()
		if s.maxEntries > 0 && c+int64(n) > s.maxEntries {
			return false
		}
		if s.count.CompareAndSwap(c, c+int64(n)) {
			break
		}
	}
	return true
}

// evict drops up to n limit states of sh's first evictScan subjects (map
// order) but sub, those that expire first, and returns how many it dropped;
// never a block, a denying state (full) or a reputation.
func (s *Store) evict(sh *shard, sub string, n int) int {
	type victim struct {
		sub, id  string
		expireMS int64
	}
	var found []victim
	scanned := 0
	for other, slots := range sh.subjects {
		if scanned++; scanned > evictScan {
			break
		}
		for _, sl := range slots {
			if other != sub && sl.has && !sl.full && sl.blockMS == 0 {
				found = append(found, victim{other, sl.id, sl.state.ExpireMS})
			}
		}
	}
	slices.SortFunc(found, func(a, b victim) int { return cmp.Compare(a.expireMS, b.expireMS) })
	found = found[:min(n, len(found))]
	for _, v := range found {
		s.forget(sh, v.sub, v.id)
	}
	return len(found)
}
