package memstore

import (
	"time"

	"github.com/ratekit/ratekit/internal/subject"
)

// WithSweepEvery sets the background sweeper's period (default one second).
func WithSweepEvery(d time.Duration) Option {
	return optionFunc(func(s *Store) { s.sweepEvery = d })
}

// Counted returns the count WithMaxEntries keeps and the entries held.
func Counted(s *Store) (counted int64, held int) {
	return s.count.Load(), s.Len()
}

// SweeperDone returns a channel closed when s's sweeper has returned.
func SweeperDone(s *Store) <-chan struct{} { return s.sweeperDone }

// ShardOf returns the index of the shard that holds key's state.
func ShardOf(s *Store, key string) int {
	sh := s.shard(subject.Key(key))
	for i := range s.shards {
		if sh == &s.shards[i] {
			return i
		}
	}
	panic("no shard")
}
