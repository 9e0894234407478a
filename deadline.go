package ratekit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// tickWidth is the granularity of the store calls' shared deadlines: a
// call's deadline is rounded up to it, so a call ends at its timeout or up to
// tickWidth after it, never before (as a timer of its own would, which also
// fires late).
const tickWidth = time.Millisecond

// A tick is the deadline shared by the store calls whose own deadlines fall
// in one tickWidth: one timer closes done when it passes. A tick is never
// changed once made, except done, closed once.
type tick struct {
	index int64 // the deadline in Unix nanoseconds / tickWidth, rounded up
	at    time.Time
	done  chan struct{}
}

// ticks holds the ticks whose timers have not fired yet. Calls made within
// one millisecond with one timeout share the last tick, read without a lock.
var ticks struct {
	last atomic.Pointer[tick]
	mu   sync.Mutex
	m    map[int64]*tick
}

// tickFor returns the tick of deadline d (rounded up to tickWidth), made
// and armed by the first call that needs it; now is the caller's clock
// reading, d later than now. A tick is shared only while its time is ahead
// of now (the wall clock may step back).
func tickFor(now, d time.Time) *tick {
	rem := d.UnixNano() % int64(tickWidth)
	if rem < 0 {
		rem += int64(tickWidth)
	}
	up := time.Duration(0)
	if rem > 0 {
		up = tickWidth - time.Duration(rem)
	}
	index := (d.UnixNano() + int64(up)) / int64(tickWidth)
	if t := ticks.last.Load(); t != nil && t.index == index && t.at.After(now) {
		return t
	}
	ticks.mu.Lock()
	defer ticks.mu.Unlock()
	t := ticks.m[index]
	if t == nil || !t.at.After(now) {
		t = &tick{index: index, at: d.Add(up), done: make(chan struct{})}
		if ticks.m == nil {
			ticks.m = map[int64]*tick{}
		}
		ticks.m[index] = t
		time.AfterFunc(t.at.Sub(now), func() {
			close(t.done)
			ticks.mu.Lock()
			if ticks.m[index] == t {
				delete(ticks.m, index)
			}
			ticks.mu.Unlock()
		})
	}
	ticks.last.Store(t)
	return t
}

// A boundContext bounds one store call by a shared tick: Done is the tick's
// channel, Deadline its time, Err context.DeadlineExceeded once it passed.
// Values are the parent's; the parent's cancellation is not passed on, so a
// request whose client went away still lets its store call finish (within
// the timeout) rather than cut it off mid-reply, which would cost a Redis
// client its connection. It costs one small allocation, where
// context.WithTimeout costs a timer and a cancellation per call.
type boundContext struct {
	parent context.Context
	t      *tick
}

// bounded returns parent bounded to end timeout after now (up to tickWidth
// later), or nil for a timeout shorter than the rounding (then
// context.WithTimeout serves).
func bounded(parent context.Context, now time.Time, timeout time.Duration) context.Context {
	if timeout < 10*tickWidth {
		return nil
	}
	return &boundContext{parent: parent, t: tickFor(now, now.Add(timeout))}
}

func (c *boundContext) Deadline() (time.Time, bool) { return c.t.at, true }
func (c *boundContext) Done() <-chan struct{}       { return c.t.done }
func (c *boundContext) Value(key any) any           { return c.parent.Value(key) }

func (c *boundContext) Err() error {
	select {
	case <-c.t.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// detached is ctx without its cancellation: an ending request does not
// undo its settlement. A deadline of ctx still bounds it, but never to less
// than DefaultTimeout from now.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithoutCancel(ctx), noCancel
	}
	return context.WithDeadline(context.WithoutCancel(ctx), later(d, time.Now().Add(DefaultTimeout)))
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
