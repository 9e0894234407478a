package redisengine

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// fakeClock is the engine's clock in these tests: the real time plus what
// the test moved it by, so that contexts made from it keep real timers.
type fakeClock struct{ moved atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Now().Add(time.Duration(c.moved.Load())) }
func (c *fakeClock) advance(d time.Duration) { c.moved.Add(int64(d)) }

// TestOffsetsEstimate: the estimate is the least sample of the last one or
// two periods; a late reply's sample is never it; without a sample, or
// without a deadline, no deadline is sent.
func TestOffsetsEstimate(t *testing.T) {
	clock := &fakeClock{}
	o := newOffsets(clock.now)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if by := o.deadline(ctx); by != 0 {
		t.Fatalf("deadline %d before any sample, want 0", by)
	}
	const skew = 5 * time.Second // Redis's clock ahead
	redis := func(sent time.Time, trip time.Duration) int64 {
		return sent.Add(skew + trip).UnixMicro()
	}
	// a sample: Redis's time minus the local time of sending
	sample := func(sent time.Time, trip time.Duration) int64 { return redis(sent, trip) - o.local(sent) }
	observe := func(sent time.Time, trip time.Duration) { o.observe(o.local(sent), redis(sent, trip)) }
	s1 := clock.now()
	observe(s1, 300*time.Microsecond)
	s2 := clock.now()
	observe(s2, 100*time.Microsecond) // the fastest trip
	s3 := clock.now()
	observe(s3, time.Second) // a call that waited a second
	if got, want := o.est.Load(), sample(s2, 100*time.Microsecond); got != want {
		t.Fatalf("estimate %d, want the least sample %d", got, want)
	}
	if by := o.deadline(context.Background()); by != 0 {
		t.Fatalf("deadline %d for a context without one, want 0", by)
	}
	// a deadline 100 ms ahead lands 100 ms + the margin after Redis's time
	// at sending, give or take the fastest trip
	sent := clock.now()
	ctx100, cancel100 := context.WithDeadline(context.Background(), sent.Add(100*time.Millisecond))
	defer cancel100()
	by := o.deadline(ctx100)
	want := redis(sent, 100*time.Millisecond+lateMargin)
	if by < want-1 || by > want+100+1 { // ±1 µs of rounding, the 100 µs trip
		t.Fatalf("deadline %d, want %d (Redis's time + 100 ms + %v) + the fastest trip", by, want, lateMargin)
	}
	// after two periods without a faster sample, the slow ones are the estimate
	clock.advance(offsetPeriod)
	s4 := clock.now()
	observe(s4, 200*time.Microsecond)
	if got, want := o.est.Load(), sample(s2, 100*time.Microsecond); got != want {
		t.Fatalf("a period on: estimate %d, want %d (the period before still counts)", got, want)
	}
	clock.advance(offsetPeriod)
	s5 := clock.now()
	observe(s5, 400*time.Microsecond)
	if got, want := o.est.Load(), sample(s4, 200*time.Microsecond); got != want {
		t.Fatalf("two periods on: estimate %d, want %d", got, want)
	}
	o.reset()
	if by := o.deadline(ctx); by != 0 {
		t.Fatalf("deadline %d after a reset, want 0", by)
	}
}

// TestOffsetsFollowSteps: a step of Redis's clock is followed within two
// periods, forward or back, from samples alone.
func TestOffsetsFollowSteps(t *testing.T) {
	for _, step := range []time.Duration{5 * time.Second, -5 * time.Second} {
		clock := &fakeClock{}
		o := newOffsets(clock.now)
		skew := time.Duration(0)
		observe := func() {
			sent := clock.now()
			o.observe(o.local(sent), sent.Add(skew+100*time.Microsecond).UnixMicro())
		}
		observe()
		before := o.est.Load()
		skew = step
		observe()
		if got := o.est.Load() - before; step < 0 && (got < step.Microseconds()-1 || got > step.Microseconds()+1) { // ±1 µs of rounding
			t.Fatalf("step %v: estimate %d, want %d at once", step, o.est.Load(), before+step.Microseconds())
		}
		for range 2 {
			clock.advance(offsetPeriod)
			observe()
		}
		if got := o.est.Load() - before; got < step.Microseconds()-1 || got > step.Microseconds()+1 {
			t.Fatalf("step %v: estimate moved %d µs two periods on", step, got)
		}
	}
}

// fakeRedis is a Conn that answers reserve calls about one InFlight limit
// as lua/engine.lua does, on a clock of its own: the engine's plus skew, and
// plus stall for a call it runs late. It counts the slots taken.
type fakeRedis struct {
	clock   *fakeClock
	skew    atomic.Int64 // Redis's clock ahead of the engine's
	stall   atomic.Int64 // added to the clocks as a call waits to run
	taken   atomic.Int64
	late    atomic.Int64
	lastArg atomic.Int64 // the last call's deadline argument
}

func (f *fakeRedis) Eval(_ context.Context, cmd *Command) (any, error) {
	args := cmd.AppendArgs(nil)
	if args[1] != "reserve" {
		return nil, errors.New("not a reserve call")
	}
	by, err := strconv.ParseInt(args[3], 10, 64)
	if err != nil {
		return nil, err
	}
	f.lastArg.Store(by)
	if d := f.stall.Swap(0); d > 0 {
		f.clock.advance(time.Duration(d))
	}
	now := f.clock.now().Add(time.Duration(f.skew.Load())).UnixMicro()
	if by > 0 && now > by {
		f.late.Add(1)
		return nil, &ReplyError{Msg: "LATE the reserve call ran after its deadline: it took nothing"}
	}
	f.taken.Add(1)
	return []int64{1, 3, 0, 0, 0, 0, 0, now}, nil
}

func (f *fakeRedis) LoadLibrary(context.Context, string) error { return nil }

// TestReserveSkewedClock: with Redis's clock 5 s ahead of the instance's, or
// 5 s behind, reserves on time are admitted with a deadline on Redis's
// clock, a reserve that runs after its caller gave up takes nothing and
// fails as a context.DeadlineExceeded, and a step of Redis's clock forward
// costs the call that finds it one more round trip, not a refusal.
func TestReserveSkewedClock(t *testing.T) {
	limits := []ratekit.Limit{ratekit.InFlight(4)}
	for _, skew := range []time.Duration{5 * time.Second, -5 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			clock := &fakeClock{}
			e, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			e.offset = newOffsets(clock.now)
			f := &fakeRedis{clock: clock}
			f.skew.Store(int64(skew))
			reserve := func() (ratekit.Decision, error) {
				ctx, cancel := context.WithDeadline(context.Background(), clock.now().Add(100*time.Millisecond))
				defer cancel()
				p, err := e.Prepare(f, limits)
				if err != nil {
					return ratekit.Decision{}, err
				}
				return p.(store.Settler).Reserve(ctx, "subject", 1)
			}
			if d, err := reserve(); err != nil || !d.Allowed || f.lastArg.Load() != 0 {
				t.Fatalf("first reserve: %+v, %v, deadline %d; want admitted, no deadline (no sample yet)", d, err, f.lastArg.Load())
			}
			for range 3 {
				sent := clock.now().Add(skew)
				if d, err := reserve(); err != nil || !d.Allowed {
					t.Fatalf("reserve: %+v, %v; want admitted", d, err)
				}
				by, want := f.lastArg.Load(), sent.Add(100*time.Millisecond+lateMargin).UnixMicro()
				if by < want-2 || by > want+1000 { // 2 µs of rounding
					t.Fatalf("deadline %d sent, want %d (on Redis's clock, 100 ms + %v ahead) within 1 ms", by, want, lateMargin)
				}
			}
			taken := f.taken.Load()
			f.stall.Store(int64(300 * time.Millisecond)) // the next call runs 300 ms after it was sent
			_, err = reserve()
			if !errors.Is(err, context.DeadlineExceeded) || f.late.Load() != 1 || f.taken.Load() != taken {
				t.Fatalf("stalled reserve: %v, %d late, %d taken; want a context.DeadlineExceeded, 1 late, nothing taken",
					err, f.late.Load(), f.taken.Load()-taken)
			}
			var re *RunError
			if !errors.As(err, &re) || !re.Ended {
				t.Fatalf("stalled reserve: %#v, want a *RunError that ended", err)
			}
			f.skew.Add(int64(5 * time.Second)) // Redis's clock steps 5 s forward
			if d, err := reserve(); err != nil || !d.Allowed || f.late.Load() != 2 || f.taken.Load() != taken+1 {
				t.Fatalf("reserve after a step: %+v, %v, %d late, %d taken; want admitted once, after one late try",
					d, err, f.late.Load(), f.taken.Load()-taken)
			}
			sent := clock.now().Add(time.Duration(f.skew.Load()))
			if d, err := reserve(); err != nil || !d.Allowed || f.late.Load() != 2 {
				t.Fatalf("reserve after the step: %+v, %v, %d late; want admitted", d, err, f.late.Load())
			}
			if by, want := f.lastArg.Load(), sent.Add(100*time.Millisecond+lateMargin).UnixMicro(); by < want-2 || by > want+1000 {
				t.Fatalf("deadline %d after the step, want %d within 1 ms", by, want)
			}
		})
	}
}
