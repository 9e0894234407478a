package redisengine

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// A reserve call carries its caller's deadline on Redis's clock, and Redis
// takes nothing for a call it runs past it (docs/architecture.md, "A reserve
// past its deadline takes nothing").
const (
	offsetPeriod  = time.Second          // the estimate is the least sample of this period and the one before
	lateMargin    = 2 * time.Millisecond // added to deadlines: the clocks' drift over two periods
	unknownOffset = math.MinInt64        // no estimate yet
)

// offsets estimates how far Redis's clock is ahead of the engine's (µs since
// start, on Go's monotonic clock) from the time each reserve reply carries,
// an upper bound of the offset. It is safe for concurrent use.
type offsets struct {
	start time.Time        // the engine's epoch: local times are µs since start
	clock func() time.Time // time.Now, or a test's clock

	est  atomic.Int64 // min(cur, prev), or unknownOffset
	ends atomic.Int64 // local µs at which the current period ends; 0: no sample yet
	cur  atomic.Int64 // the least sample of the current period (written under mu)

	mu   sync.Mutex
	prev int64 // the least sample of the period before, or math.MaxInt64
}

func newOffsets(clock func() time.Time) *offsets {
	if clock == nil {
		clock = time.Now
	}
	o := &offsets{clock: clock, start: clock()}
	o.est.Store(unknownOffset)
	return o
}

// now returns the engine's time: µs since start.
func (o *offsets) now() int64 { return o.local(o.clock()) }

// local returns t as the engine's time: µs since start.
func (o *offsets) local(t time.Time) int64 { return t.Sub(o.start).Microseconds() }

// deadline returns ctx's deadline on Redis's clock (µs) plus lateMargin, or
// 0 (no check) when ctx has none or the offset is unknown.
func (o *offsets) deadline(ctx context.Context) int64 {
	d, ok := ctx.Deadline()
	est := o.est.Load()
	if !ok || est == unknownOffset {
		return 0
	}
	by := o.local(d) + est + lateMargin.Microseconds()
	return min(max(by, 1), 1<<53-1) // Lua's numbers are exact below 2^53
}

// observe takes the sample of a call sent at local that Redis ran at at.
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

// reset forgets the estimate, which a call refused as late while its caller
// still waited proved too small.
func (o *offsets) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.est.Store(unknownOffset)
	o.ends.Store(0)
}

// reserveLate answers a reserve call, cmd, that Redis refused as late (err),
// writing nothing: a context.DeadlineExceeded when ctx's deadline has passed;
// else the estimate was too small, and cmd is sent again, once, without a
// deadline (*sent becomes the time of sending).
func (e *Engine) reserveLate(ctx context.Context, c Conn, cmd *Command, err error, sent *int64) (any, error) {
	if d, ok := ctx.Deadline(); !ok || ctx.Err() != nil || e.offset.now() >= e.offset.local(d) {
		var reply *ReplyError
		errors.As(err, &reply) // the caller saw it is "LATE ..."
		return nil, &RunError{Err: &lateError{reply: reply}, Ended: true}
	}
	e.offset.reset()
	cmd.head[3] = "0"
	*sent = e.offset.now()
	return e.run(ctx, c, progDecide, cmd)
}

// A lateError is a reserve call Redis refused as late: a
// context.DeadlineExceeded that unwraps to Redis's reply.
type lateError struct{ reply *ReplyError }

func (e *lateError) Error() string        { return e.reply.Error() }
func (e *lateError) Unwrap() error        { return e.reply }
func (e *lateError) Is(target error) bool { return target == context.DeadlineExceeded }
