package denycache

import "time"

// DefaultMaxEntries is the number of denials a Store holds unless
// WithMaxEntries says otherwise. An entry costs about 160 bytes for an IP
// address and one limit (TestMemoryPerEntry), some 50 more for a 64-byte
// subject (longer ones are held as a 32-byte digest), so the default bounds
// the cache to some 16 to 21 MB.
const DefaultMaxEntries = 100_000

// DefaultMargin is how long before a denial's Retry-After a Store stops
// answering it, unless WithMargin says otherwise: the resolution of the
// Redis store's clock for windows and blocks (see WithMargin).
const DefaultMargin = time.Millisecond

// An Option configures a Store. Options are values built by the With
// functions of this package, safe to share.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	now        func() time.Time
	maxEntries int
	margin     time.Duration
}

// WithMaxEntries bounds the denials the Store holds to n (default
// DefaultMaxEntries; n < 1 keeps the default). At the bound a new denial is
// not cached, once the expired entries of its shard have been dropped: the
// call was decided by the store and later ones are too, until room is made.
// Nothing live is evicted. Dropping an entry could never admit a request
// anyway: the cache only ever denies, and the store decides whatever it
// does not hold.
func WithMaxEntries(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxEntries = n
		}
	})
}

// WithClock makes the Store read the local time from now instead of
// time.Now (whose monotonic reading it otherwise uses). Tests pass a fake
// clock, the same one their store reads. now must be safe for concurrent
// use.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) {
		if now != nil {
			c.now = now
		}
	})
}

// WithMargin sets how long before a denial's Retry-After the Store stops
// answering it and asks the store again (default DefaultMargin, 1 ms;
// negative values mean 0).
//
// The store measures Retry-After from its own clock's reading during the
// call, and the cache from its reading just before the call, which is
// earlier in time; but a store that reads its clock in whole milliseconds
// (the Redis store for windows and blocks, memstore for windows) may read
// up to 1 ms less than the time it is. The margin covers that rounding, so
// that the cache never denies past the moment the store would admit. Use 0
// only with a store whose clock is the cache's own and has no rounding, as
// tests on a fake clock at whole milliseconds do.
func WithMargin(d time.Duration) Option {
	return optionFunc(func(c *config) { c.margin = max(d, 0) })
}
