package memstore

import (
	"math"
	"strings"

	"github.com/ratekit/ratekit/internal/algo"
)

// A slot is one limit's state for one subject, and that limit's block: a
// subject's slots are the value of its shard's subjects map, one per limit
// ID it has state for, so that a call hashes its subject once, whatever the
// number of limits, and updates its slots in place.
//
// The state and the block are each an entry as WithMaxEntries and Len count
// them, while present; a slot with neither is removed. Like a Redis key, a
// state or block lives through its expiry millisecond and is dropped after
// it, by sweep. The zero slot holds nothing.
type slot struct {
	id      string     // the limit's Spec().ID
	state   algo.State // the limit's state, when has
	blockMS int64      // the block's expiry, when blocked
	has     bool
	blocked bool
	// full reports that the limit's last decision left nothing for this
	// subject (a denial, or an admission with nothing remaining): a state
	// that is never evicted to make room (see evict).
	full bool
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

// slotOf returns sub's slots, updated as they are in sh, and the index of
// the slot of id among them, adding an empty slot when there is none; slots
// are sub's slots as the caller last read them. The caller holds sh.mu.
func (sh *shard) slotOf(sub string, slots []slot, id string) ([]slot, int) {
	if i := find(slots, id); i >= 0 {
		return slots, i
	}
	if len(slots) == 0 {
		slots = make([]slot, 0, 1) // most subjects have state for one limit
		sh.peakSubjects = max(sh.peakSubjects, len(sh.subjects)+1)
	}
	slots = append(slots, slot{id: id})
	// A copy of sub: Go stores the key of every map assignment, and a
	// caller's subject can be part of a larger string (a request body).
	sh.subjects[strings.Clone(sub)] = slots
	return slots, len(slots) - 1
}

// setState stores *e as the state of id for sub, full when it leaves
// nothing (see slot), and returns sub's slots as they now are. The caller
// accounts for a new entry (see admit).
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

// setBlock blocks id for sub until expireMS, and returns sub's slots as
// they now are and whether the block is a new entry, for which the caller
// accounts.
func (sh *shard) setBlock(sub string, slots []slot, id string, expireMS int64) ([]slot, bool) {
	slots, i := sh.slotOf(sub, slots, id)
	sl := &slots[i]
	fresh := !sl.blocked
	if fresh {
		sl.blocked = true
		sh.held++
	}
	sl.blockMS = expireMS
	sh.minExpireMS = min(sh.minExpireMS, expireMS)
	return slots, fresh
}

// forget drops the state and the block of id for sub.
func (s *Store) forget(sh *shard, sub, id string) {
	slots := sh.subjects[sub]
	i := find(slots, id)
	if i < 0 {
		return
	}
	n := 0
	if slots[i].has {
		n++
	}
	if slots[i].blocked {
		n++
	}
	old := slots
	slots = append(old[:i], old[i+1:]...)
	old[len(old)-1] = slot{} // moved down, or the one dropped
	if len(slots) == 0 {
		delete(sh.subjects, sub)
	} else {
		sh.subjects[strings.Clone(sub)] = slots // see slotOf
	}
	s.dropped(sh, n)
}

// dropped accounts for n entries of sh's slots gone.
func (s *Store) dropped(sh *shard, n int) {
	sh.held -= n
	if s.maxEntries > 0 {
		s.count.Add(int64(-n))
	}
}

// sweepSlots drops, from every subject of sh, the states and blocks that
// have expired at nowMS, removing the slots and subjects left empty. It
// returns the number of entries dropped and the earliest expiry left.
func (sh *shard) sweepSlots(nowMS int64) (dropped int, low int64) {
	low = math.MaxInt64
	for sub, slots := range sh.subjects {
		kept := slots[:0]
		for _, sl := range slots {
			if sl.has && sl.state.ExpireMS < nowMS {
				sl.has, sl.state = false, algo.State{}
				dropped++
			}
			if sl.blocked && sl.blockMS < nowMS {
				sl.blocked = false
				dropped++
			}
			if sl.has {
				low = min(low, sl.state.ExpireMS)
			}
			if sl.blocked {
				low = min(low, sl.blockMS)
			}
			if sl.has || sl.blocked {
				kept = append(kept, sl)
			}
		}
		clear(slots[len(kept):])
		switch {
		case len(kept) == 0:
			delete(sh.subjects, sub)
		case len(kept) < len(slots):
			sh.subjects[sub] = kept
		}
	}
	sh.held -= dropped
	return dropped, low
}
