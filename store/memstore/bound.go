package memstore

import (
	"cmp"
	"slices"
	"time"

	"github.com/ratekit/ratekit"
)

// evictScan is how many subjects of a shard a full store looks at for
// state to evict, starting where Go's map iteration starts (at random).
const evictScan = 64

// admit makes room, under WithMaxEntries, for the entries a call about sub
// is about to add to sh (need counts them, as the shard stands) and counts
// them. At the bound it sweeps sh's expired entries; failing that, it evicts
// the cheapest live state of other subjects of sh (see evict); failing that,
// it wakes the background sweeper, for the other shards, and reports false.
// A sweep or an eviction changes sh's maps: the caller reads its subject's
// slots again.
func (s *Store) admit(sh *shard, sub string, nowMS int64, need func() int) bool {
	if s.reserve(need()) {
		return true
	}
	if s.sweep(sh, nowMS, true) > 0 && s.reserve(need()) {
		return true
	}
	if s.evict(sh, sub, need()) > 0 && s.reserve(need()) {
		return true
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return false
}

// victim is a state evict may drop.
type victim struct {
	sub      string
	id       string
	expireMS int64
}

// evict drops up to n limit states of subjects of sh other than sub, among
// the first evictScan subjects map iteration gives, those that expire
// first, and returns how many it dropped. It never drops a block, a state
// that denies (full, see slot), or a reputation: forgetting a
// state that admits loses at most what its limit had counted, so a subject
// can be admitted at most once more per limit its quota over, per eviction
// of its state (see WithMaxEntries).
func (s *Store) evict(sh *shard, sub string, n int) int {
	var found []victim
	scanned := 0
	for other, slots := range sh.subjects {
		if scanned++; scanned > evictScan {
			break
		}
		if other == sub {
			continue
		}
		for _, sl := range slots {
			if sl.has && !sl.full && !sl.blocked {
				found = append(found, victim{other, sl.id, sl.state.ExpireMS})
			}
		}
	}
	slices.SortFunc(found, func(a, b victim) int { return cmp.Compare(a.expireMS, b.expireMS) })
	dropped := 0
	for _, v := range found[:min(n, len(found))] {
		s.forget(sh, v.sub, v.id)
		dropped++
	}
	return dropped
}

// refuse turns states into the denial of a call that found the store full
// of state it may not evict: every limit denies, with nothing remaining,
// until the earliest expiry in sh, when room can be made (at least 1 ms, at
// most 1 s: the entries may be in other shards, which the background sweep
// was asked to sweep). Nothing is charged. A full store so never lets a new
// subject through unlimited, whatever the caller's error policy.
func refuse(states []ratekit.LimitState, sh *shard, nowMS int64) {
	wait := time.Duration(min(max(sh.minExpireMS-nowMS, 1), 1000)) * time.Millisecond
	for i := range states {
		st := &states[i]
		st.Allowed, st.Remaining, st.Delay = false, 0, 0
		st.RetryAfter = max(st.RetryAfter, wait)
		st.ResetAfter = max(st.ResetAfter, wait)
		st.EffectiveWindow = st.RetryAfter // nothing passes before it
	}
}

// reserve counts n more entries if that keeps the store within its bound.
func (s *Store) reserve(n int) bool {
	if n == 0 {
		return true
	}
	for {
		c := s.count.Load()
		if c+int64(n) > s.maxEntries {
			return false
		}
		if s.count.CompareAndSwap(c, c+int64(n)) {
			return true
		}
	}
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

// markFull marks the state of id for sub, if any, as one that denies.
func (sh *shard) markFull(sub, id string) {
	slots := sh.subjects[sub]
	if i := find(slots, id); i >= 0 {
		slots[i].full = true
	}
}
