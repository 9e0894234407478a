package denycache

import (
	"slices"
	"strings"
	"sync"

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

// sets holds the limit sets prepared on a Store, by their IDs, each
// followed by 0.
type sets struct {
	mu sync.Mutex
	m  map[string]*limitSet
}

// find returns the set of limits, made on first use; nil beyond maxSets.
func (t *sets) find(limits []ratekit.Limit) *limitSet {
	var b strings.Builder
	for _, l := range limits {
		b.WriteString(l.Spec().ID)
		b.WriteByte(0)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.m[b.String()]; ok {
		return s
	}
	if len(t.m) >= maxSets {
		return nil
	}
	s := &limitSet{ids: make([]string, len(limits)), cacheable: true}
	for i, l := range limits {
		sp := l.Spec()
		s.ids[i] = sp.ID
		s.cacheable = s.cacheable && algo.Of(sp.Algorithm).Caps()&algo.Cacheable != 0
		if i == 0 || sp.Quota < s.maxCost {
			s.maxCost = sp.Quota
		}
		if sp.Block > 0 {
			s.blocks = append(s.blocks, i)
		}
	}
	t.m[b.String()] = s
	return s
}

// sharing calls f with every set that shares a limit with ids.
func (t *sets) sharing(ids []string, f func(*limitSet)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.m {
		if slices.ContainsFunc(s.ids, func(id string) bool { return slices.Contains(ids, id) }) {
			f(s)
		}
	}
}
