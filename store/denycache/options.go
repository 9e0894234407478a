package denycache

import (
	"time"

	"github.com/ratekit/ratekit/internal/elapsed"
)

// DefaultMaxEntries is the number of denials a Store holds unless
// WithMaxEntries says otherwise: some 16 to 21 MB (an entry costs about 160
// bytes for an IP address and one limit, TestMemoryPerEntry).
const DefaultMaxEntries = 100_000

// DefaultMargin is how long before a denial's Retry-After a Store stops
// answering it unless WithMargin says otherwise: the Redis store's clock
// resolution.
const DefaultMargin = time.Millisecond

// An Option configures a Store. Options are values built by the With
// functions of this package, safe to share.
type Option interface{ apply(*Store) }

type optionFunc func(*Store)

func (f optionFunc) apply(s *Store) { f(s) }

// WithMaxEntries bounds the denials the Store holds to n (default
// DefaultMaxEntries; n < 1 keeps the default). At the bound a new denial is
// not cached, once the expired entries have been dropped: the store keeps
// deciding for that subject. Nothing live is evicted.
func WithMaxEntries(n int) Option {
	return optionFunc(func(s *Store) {
		if n >= 1 {
			s.maxEntries = n
		}
	})
}

// WithClock makes the Store read the local time from now instead of
// time.Now's monotonic reading; tests pass their store's fake clock. now
// must be safe for concurrent use.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(s *Store) {
		if now != nil {
			s.clock = elapsed.New(now)
		}
	})
}

// WithMargin sets how long before a denial's Retry-After the Store stops
// answering it and asks the store again (default DefaultMargin; negative
// values mean 0). It covers a store that reads its clock in whole
// milliseconds (the Redis store, memstore for windows), whose Retry-After
// may count from up to 1 ms earlier. Use 0 only with a store on the cache's
// own clock without rounding, as tests on a fake clock do.
func WithMargin(d time.Duration) Option {
	return optionFunc(func(s *Store) { s.margin = max(d, 0) })
}
