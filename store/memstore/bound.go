package memstore

// admit makes room, under WithMaxEntries, for the entries a call is about to
// add to sh (need counts them, as the shard stands) and counts them. At the
// bound it sweeps sh's expired entries and tries again; failing that it
// wakes the background sweeper, for the other shards, and reports false.
// A sweep changes sh's maps: the caller reads its subject's slots again.
func (s *Store) admit(sh *shard, nowMS int64, need func() int) bool {
	if s.reserve(need()) {
		return true
	}
	if s.sweep(sh, nowMS, true) > 0 && s.reserve(need()) {
		return true
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return false
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

// missing counts the limits of p that have no state for sub in sh: the
// entries that charging them adds.
func (sh *shard) missing(sub string, p []pending) int {
	slots := sh.subjects[sub]
	n := 0
	for i := range p {
		if j := find(slots, p[i].sp.ID); j < 0 || !slots[j].has {
			n++
		}
	}
	return n
}
