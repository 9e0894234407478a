package redisengine

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// A reserve call carries its caller's deadline into Redis, on Redis's clock,
// and Redis takes nothing for a call it runs past it (see lua/engine.lua): a
// call written to a Redis that stalled, and given up by its caller (failed
// open), must not take a slot that no Reservation holds, renews or
// releases when Redis wakes up.
const (
	// offsetPeriod is how long a sample of the offset counts: the estimate is
	// the least sample of the current period and the one before it, so a
	// clock step is followed within two periods even where no call shows it
	// (see offsets.reset for the calls that do).
	offsetPeriod = time.Second
	// lateMargin is added to every deadline sent: Redis refuses a call only
	// when it runs more than this past the caller's deadline. It covers the
	// two clocks drifting apart between samples (2 ms is 1,000 ppm over two
	// periods: two clocks that NTP slews at its most, 500 ppm, in opposite
	// directions), so that a call on time is not refused for the estimate's
	// age. A stall that ends within it can still leave slots taken until
	// their lease ends.
	lateMargin = 2 * time.Millisecond
)

// unknownOffset marks an estimate not made yet.
const unknownOffset = math.MinInt64

// offsets estimates how far Redis's clock is ahead of the engine's (µs, on
// Go's monotonic clock, counted from start), from the time every reserve
// reply carries. A sample, Redis's time minus the time the call was sent, is
// an upper bound of the offset: Redis read its clock after the call was
// sent. The least sample of a recent period is the estimate: the offset plus
// the fastest trip to Redis. A call that waited (a stall, a queue) gives a
// large sample, never the least one. Deadlines translated with it fall at
// or after the caller's, never before, while the clocks keep their pace; a
// clock step that makes the estimate too small shows as a call refused
// while its caller still waits, and reset drops the estimate. It is safe for
// concurrent use.
type offsets struct {
	start time.Time        // the engine's epoch: local times are µs since start
	clock func() time.Time // the engine's clock in tests; nil: time.Now

	est  atomic.Int64 // min(cur, prev), or unknownOffset
	ends atomic.Int64 // local µs at which the current period ends; 0: no sample yet
	cur  atomic.Int64 // the least sample of the current period (written under mu)

	mu   sync.Mutex
	prev int64 // the least sample of the period before, or math.MaxInt64
}

func newOffsets(clock func() time.Time) *offsets {
	o := &offsets{clock: clock, start: time.Now()}
	if clock != nil {
		o.start = clock()
	}
	o.est.Store(unknownOffset)
	return o
}

// now returns the engine's time: µs since start, read from the monotonic
// clock alone (time.Since reads one clock where time.Now reads two).
func (o *offsets) now() int64 {
	if o.clock != nil {
		return o.local(o.clock())
	}
	return time.Since(o.start).Microseconds()
}

// local returns t as the engine's time: µs since start.
func (o *offsets) local(t time.Time) int64 { return t.Sub(o.start).Microseconds() }

// deadline returns the argument of a reserve call: ctx's deadline on Redis's
// clock (µs) plus lateMargin, or 0 (no check) when ctx has none or no reply
// has shown the offset yet.
func (o *offsets) deadline(ctx context.Context) int64 {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	est := o.est.Load()
	if est == unknownOffset {
		return 0
	}
	by := o.local(d) + est + lateMargin.Microseconds()
	return min(max(by, 1), 1<<53-1) // Lua's numbers are exact below 2^53
}

// observe takes the sample of a reply that carries Redis's time at (µs) to
// a call sent at local, the engine's time.
func (o *offsets) observe(local, at int64) {
	sample := at - local
	if local < o.ends.Load() && sample >= o.cur.Load() {
		return // most replies: nothing new
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	cur, ends := o.cur.Load(), o.ends.Load()
	switch {
	case ends == 0: // the first sample, or the first since a reset
		o.prev = math.MaxInt64
		cur, ends = sample, local+offsetPeriod.Microseconds()
	case local >= ends: // a new period
		o.prev = cur
		if local >= ends+offsetPeriod.Microseconds() { // none in the period before
			o.prev = math.MaxInt64
		}
		cur, ends = sample, local+offsetPeriod.Microseconds()
	default:
		cur = min(cur, sample)
	}
	o.cur.Store(cur)
	o.ends.Store(ends)
	o.est.Store(min(cur, o.prev))
}

// reset forgets the estimate: a call was refused as late while its caller
// still waited, which proves it too small (Redis's clock stepped forward).
// Calls send no deadline until the next sample.
func (o *offsets) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.est.Store(unknownOffset)
	o.ends.Store(0)
}
