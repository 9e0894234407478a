package redistest

import (
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/ratekit/ratekit/store/storetest"
)

// Clock is a fake clock shared by memstore and miniredis.
type Clock = storetest.Clock

// NewClock returns a Clock at start that drives minis: Advance moves
// miniredis's TIME (SetTime) and expires its keys (FastForward) together, as
// real time would; memstore reads Now.
func NewClock(start time.Time, minis ...*miniredis.Miniredis) *Clock {
	var follow []func(time.Time, time.Duration)
	for _, m := range minis {
		m.SetTime(start)
		follow = append(follow, func(now time.Time, d time.Duration) {
			m.SetTime(now)
			m.FastForward(d)
		})
	}
	return storetest.NewClock(start, follow...)
}

// Sleep lets real time pass: the Advance of a harness on the real clock.
func Sleep(d time.Duration) { time.Sleep(d) }
