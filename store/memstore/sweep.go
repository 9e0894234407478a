package memstore

import (
	"maps"
	"runtime"
	"sync"
	"time"
	"weak"
)

const (
	// compactMin is the peak size below which a map is never rebuilt: a
	// small map costs little, and rebuilding it would churn.
	compactMin = 256
	// kickGap is the least real time between two sweeps that a full store
	// asks for (see WithMaxEntries).
	kickGap = 10 * time.Millisecond
)

// Sweep reads the store's clock, drops the state that has expired by it, in
// every shard, and rebuilds each map that has shrunk to a quarter of its
// peak (of at least 256 entries) so that its memory goes back to the heap.
// The background sweeper does the same every second; call Sweep to reclaim
// at a moment of your choosing, e.g. after stepping a fake clock (WithClock).
func (s *Store) Sweep() {
	s.sweepAll(s.clock() / 1000)
}

// sweepAll sweeps every shard at nowMS.
func (s *Store) sweepAll(nowMS int64) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		s.sweep(sh, nowMS, true)
		sh.mu.Unlock()
	}
}

// Close stops the background sweeper and waits for it to return. It is
// idempotent and always returns nil. The store stays usable: expired state
// is then dropped only as calls pass (each call sweeps its shard at most once
// a second of the store's clock) or by Sweep.
func (s *Store) Close() error {
	if s.sweeper != nil {
		s.sweeper.stop()
		<-s.sweeper.done
	}
	return nil
}

// maybeSweep sweeps sh if its sweep interval has passed: what a call does
// before it reads the shard. The caller holds sh.mu.
func (s *Store) maybeSweep(sh *shard, nowMS int64) {
	if nowMS >= sh.nextSweepMS {
		s.sweep(sh, nowMS, false)
	}
}

// sweep drops sh's expired entries and reputations, at most once per sweep
// interval unless forced, then compacts its maps; it returns the number of
// entries dropped. The caller holds sh.mu.
func (s *Store) sweep(sh *shard, nowMS int64, force bool) int {
	if !force && nowMS < sh.nextSweepMS {
		return 0
	}
	sh.nextSweepMS = nowMS + sweepIntervalMS
	dropped := 0
	if sh.minExpireMS < nowMS { // something may have expired
		var low int64
		dropped, low = sh.sweepSlots(nowMS)
		for k, r := range sh.reps {
			if r.expireMS < nowMS {
				delete(sh.reps, k)
				dropped++
			} else {
				low = min(low, r.expireMS)
			}
		}
		sh.minExpireMS = low
		if s.maxEntries > 0 {
			s.count.Add(int64(-dropped))
		}
	}
	sh.compact()
	return dropped
}

// compact rebuilds a map that holds a quarter or less of its peak, which Go
// never gives back: copying the live entries into a new map frees the old
// one's buckets. Each rebuild copies at most a quarter of the inserts that
// built the peak, so its cost is amortized over them.
func (sh *shard) compact() {
	sh.subjects, sh.peakSubjects = rebuilt(sh.subjects, sh.peakSubjects)
	sh.reps, sh.peakReps = rebuilt(sh.reps, sh.peakReps)
}

// rebuilt returns m, or a copy of it when it holds a quarter or less of its
// peak (of at least compactMin), with the peak of the map returned.
func rebuilt[K comparable, V any](m map[K]V, peak int) (map[K]V, int) {
	if peak < compactMin || len(m) > peak/4 {
		return m, peak
	}
	c := make(map[K]V, len(m))
	maps.Copy(c, m)
	return c, len(c)
}

// stopper stops a sweeper once, by Close or by the store's cleanup.
type stopper struct {
	once sync.Once
	quit chan struct{} // closed to stop the sweeper
	done chan struct{} // closed when the sweeper has returned
}

func (p *stopper) stop() { p.once.Do(func() { close(p.quit) }) }

// startSweeper starts s's background sweeper. The goroutine holds s only
// weakly, and a cleanup stops it when s becomes unreachable, so a store
// dropped without Close does not leak it.
func startSweeper(s *Store) {
	p := &stopper{quit: make(chan struct{}), done: make(chan struct{})}
	s.sweeper = p
	runtime.AddCleanup(s, (*stopper).stop, p)
	go sweepLoop(weak.Make(s), p, s.kick, s.sweepEvery)
}

func sweepLoop(ws weak.Pointer[Store], p *stopper, kick <-chan struct{}, every time.Duration) {
	defer close(p.done)
	t := time.NewTicker(every)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
		case <-kick:
			if time.Since(last) < kickGap {
				continue
			}
		}
		s := ws.Value()
		if s == nil {
			return
		}
		if s.ownClock {
			s.sweepAll(s.seenMS.Load())
		} else {
			s.sweepAll(time.Now().UnixMicro() / 1000)
		}
		last = time.Now()
	}
}
