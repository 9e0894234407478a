package storetest

import (
	"sync"
	"time"
)

// A Clock is a fake clock for store tests: a store on it (memstore's
// WithClock takes Now) sees time move only by Advance, and stores with a
// clock of their own (miniredis) follow each Advance through a follower.
// Build it with NewClock; a Clock is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	follow []func(now time.Time, d time.Duration)
}

// NewClock returns a Clock at start; each follower is called with the new time
// and the step after every Advance.
func NewClock(start time.Time, followers ...func(now time.Time, d time.Duration)) *Clock {
	return &Clock{now: start, follow: followers}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, f := range c.follow {
		f(c.now, d)
	}
}
