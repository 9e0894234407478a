package redistest

import (
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Clock is a fake clock shared by memstore and miniredis. Advance moves
// miniredis's TIME (SetTime) and expires its keys (FastForward) together, as
// real time would; memstore reads Now.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	minis []*miniredis.Miniredis
}

// NewClock returns a Clock at start that drives minis.
func NewClock(start time.Time, minis ...*miniredis.Miniredis) *Clock {
	c := &Clock{now: start, minis: minis}
	for _, m := range minis {
		m.SetTime(start)
	}
	return c
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
	for _, m := range c.minis {
		m.SetTime(c.now)
		m.FastForward(d)
	}
}

// Sleep lets real time pass: the Advance of a harness on the real clock.
func Sleep(d time.Duration) { time.Sleep(d) }
