package denycache

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

const (
	numShards = 64
	// sweepStep is how often, by the cache's clock, a call sweeps the next
	// shard: each shard about once a second.
	sweepStep = int64(time.Second / numShards)
	// compactMin is the peak size below which a shard's map is never
	// rebuilt: a small map costs little, and rebuilding it would churn.
	compactMin = 256
)

// A shard holds the entries of the subjects that hash to it.
type shard struct {
	mu    sync.RWMutex
	epoch atomic.Uint64 // bumped (under mu) by every Reset of a subject here
	m     map[entryKey]entry
	peak  int // the largest len(m) since m was built: Go maps never shrink
	// least is at most the earliest until of the entries in m, so that a
	// sweep before then has nothing to drop and scans nothing.
	least int64
}

// entryKey identifies the entry of one subject (a subject.Key) and one
// limit set.
type entryKey struct {
	sub string
	set uint32
}

// del deletes the entry under k, if any. The caller holds sh.mu.
func (s *Store) del(sh *shard, k entryKey) {
	n := len(sh.m)
	delete(sh.m, k)
	if len(sh.m) != n {
		s.count.Add(-1)
	}
}

// reserve counts one more entry if the cache has room for it, after
// dropping sh's expired entries when it has none. The caller holds sh.mu.
func (s *Store) reserve(sh *shard, now int64) bool {
	for swept := false; ; {
		n := s.count.Load()
		if n < s.maxEntries {
			if s.count.CompareAndSwap(n, n+1) {
				return true
			}
			continue
		}
		if swept {
			return false
		}
		s.sweep(sh, now)
		swept = true
	}
}

// Len returns the number of denials the cache holds, expired ones
// included until they are swept.
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

// due reports whether the caller, at now, is the one to act at the moment
// next holds, moving it sweepStep on.
func due(next *atomic.Int64, now int64) bool {
	n := next.Load()
	return now >= n && next.CompareAndSwap(n, now+sweepStep)
}

// makeRoom sweeps every shard, at most once per sweepStep, when
// the cache is full: a new entry then takes the place of any expired one,
// not only of one in its own shard. The caller holds no shard's lock.
func (s *Store) makeRoom(now int64) {
	if s.count.Load() >= s.maxEntries && due(&s.nextFull, now) {
		s.sweepAll(now)
	}
}

// Sweep drops every expired entry now and gives back the memory of shard
// maps that have shrunk well below their peak. The cache also sweeps by
// itself while calls arrive; Sweep is for a moment of your choosing, e.g.
// after stepping a fake clock.
func (s *Store) Sweep() {
	s.sweepAll(s.clock.Nanos())
}

// sweepAll sweeps every shard at now.
func (s *Store) sweepAll(now int64) {
	for i := range s.shards {
		s.sweepLocked(&s.shards[i], now)
	}
}

// maybeSweep sweeps the next shard if it is due.
func (s *Store) maybeSweep(now int64) {
	if due(&s.nextSweep, now) {
		s.sweepLocked(&s.shards[s.cursor.Add(1)%numShards], now)
	}
}

// sweepLocked sweeps sh under its lock.
func (s *Store) sweepLocked(sh *shard, now int64) {
	sh.mu.Lock()
	s.sweep(sh, now)
	sh.mu.Unlock()
}

// sweep drops sh's entries that have expired at now, if any may have, and
// rebuilds its map when it has shrunk to a quarter of a peak of at least
// compactMin. The caller holds sh.mu.
func (s *Store) sweep(sh *shard, now int64) {
	if now < sh.least {
		return
	}
	sh.least = math.MaxInt64
	for k, e := range sh.m {
		if now >= e.until {
			s.del(sh, k)
		} else {
			sh.least = min(sh.least, e.until)
		}
	}
	if sh.peak >= compactMin && len(sh.m) <= sh.peak/4 {
		m := make(map[entryKey]entry, len(sh.m))
		for k, e := range sh.m {
			m[k] = e
		}
		sh.m, sh.peak = m, len(m)
	}
}
