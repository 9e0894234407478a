package denycache

import (
	"strings"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
)

// maxSets bounds the limit sets a Store tells apart. A Limiter has one (or
// three, with shadow limits); sets prepared beyond the bound go to the
// store uncached.
const maxSets = 1024

// A limitSet is the identity of the limits of one prepared call: the
// Spec().ID of each, in order. A limit's ID holds its name, algorithm and a
// fingerprint of its parameters, so a changed limit is a new set and is
// never answered from an old set's entries. Sets are made by Prepare, once
// per identity, and never change.
type limitSet struct {
	ids       []string // each limit's Spec().ID, in order
	cacheable bool     // all of algorithms whose denials the cache understands
	maxCost   int64    // the smallest quota: a larger cost is unsatisfiable
	blocks    []int    // the indices of the limits with a penalty block
}

// setOf returns the set of limits, whose IDs are ids, made on first use;
// nil beyond maxSets.
func (s *Store) setOf(limits []ratekit.Limit, ids []string) *limitSet {
	key := strings.Join(ids, "\x00")
	s.mu.Lock()
	defer s.mu.Unlock()
	if set, ok := s.sets[key]; ok {
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
	s.sets[key] = set
	return set
}
