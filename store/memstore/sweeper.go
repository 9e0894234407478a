package memstore

import (
	"context"
	"runtime"
	"time"
	"weak"
)

// kickGap is the least real time between two sweeps that a full store asks
// for (see WithMaxEntries).
const kickGap = 10 * time.Millisecond

// Sweep drops the state that has expired by the store's clock and gives back
// the memory of maps that have shrunk, as the background sweeper does every
// second; e.g. after stepping a fake clock (WithClock).
func (s *Store) Sweep() {
	s.sweepAll(s.clock() / 1000)
}

func (s *Store) sweepAll(nowMS int64) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		s.sweep(sh, nowMS)
		sh.mu.Unlock()
	}
}

// Close stops the background sweeper and waits for it to return. It is
// idempotent and always returns nil. The store stays usable: calls still
// sweep their shard, at most once a second of the store's clock.
func (s *Store) Close() error {
	if s.stopSweeper != nil { // not the zero Store
		s.stopSweeper()
		<-s.sweeperDone
	}
	return nil
}

// startSweeper starts s's background sweeper, which holds s only weakly: a
// cleanup stops it once s is unreachable.
func startSweeper(s *Store) {
	ctx, stop := context.WithCancel(context.Background())
	s.stopSweeper, s.sweeperDone = stop, make(chan struct{})
	runtime.AddCleanup(s, func(stop context.CancelFunc) { stop() }, stop)
	go sweepLoop(ctx, weak.Make(s), s.sweeperDone, s.kick, s.sweepEvery)
}

func sweepLoop(ctx context.Context, ws weak.Pointer[Store], done chan<- struct{}, kick <-chan struct{}, every time.Duration) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
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
