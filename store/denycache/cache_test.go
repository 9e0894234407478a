package denycache_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
)

// slow is a store that takes 10 ms of the fake clock per call and decides
// halfway, as a remote store does.
type slow struct {
	ratekit.Store
	advance func(time.Duration)
}

func (s slow) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s slow) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	s.advance(5 * time.Millisecond)
	defer s.advance(5 * time.Millisecond)
	return storetest.Take(ctx, s.Store, key, limits, cost)
}

// TestDeadlineFromBeforeTheCall: the cache counts Retry-After from its
// clock before the store call, so with a store that decides 5 ms into a
// 10 ms call, it stops answering 5 ms before the store admits, never after.
func TestDeadlineFromBeforeTheCall(t *testing.T) {
	f := newFixture(t)
	cache := denycache.New(slow{f.inner, f.clock.Advance}, denycache.WithClock(f.clock.Now), denycache.WithMargin(0))
	f.cache = cache
	l := ratekit.FixedWindow(1, time.Minute)
	f.take(t, "k", 1, l)      // the window ends 1 min after the store's decision, 5 ms into the call
	d := f.take(t, "k", 1, l) // asked 10 ms after the window began; decided 15 ms after
	if d.Allowed || d.Cached || d.RetryAfter != time.Minute-10*time.Millisecond {
		t.Fatalf("store's denial: %+v", d)
	}
	// The cache was asked at window start + 10 ms: it answers until then +
	// Retry-After = window end − 5 ms; the store admits from window end on.
	f.clock.Advance(d.RetryAfter - 10*time.Millisecond - time.Millisecond) // window end − 6 ms
	f.cached(t, "k", 1, l)
	f.clock.Advance(time.Millisecond) // window end − 5 ms: the store decides at window end
	if a := f.asked(t, "k", 1, l); !a.Allowed {
		t.Fatalf("store: %+v", a)
	}
}

// TestChangedLimit: a limit with new parameters (same name) is a new limit
// set, never answered from the old one's denial.
func TestChangedLimit(t *testing.T) {
	f := newFixture(t)
	old := ratekit.FixedWindow(1, time.Minute).Named("api")
	f.deny(t, "k", old)
	f.cached(t, "k", 1, old)
	raised := ratekit.FixedWindow(2, time.Minute).Named("api")
	if d := f.asked(t, "k", 1, raised); !d.Allowed {
		t.Fatalf("the new limit's first request: %+v", d)
	}
	// A set that adds a limit is a new set too.
	if d := f.asked(t, "k", 1, old, ratekit.GCRA(10, time.Minute, 10)); d.Allowed || d.Cached {
		t.Fatalf("old limit plus a new one: %+v", d)
	}
}

// TestReset: a Reset through the cache drops the subject's denials for
// every limit set that shares a limit with it, and only those.
func TestReset(t *testing.T) {
	f := newFixture(t)
	a, b := ratekit.FixedWindow(1, time.Minute).Named("a"), ratekit.FixedWindow(1, time.Minute).Named("b")
	f.deny(t, "k", a)
	f.deny(t, "k", a, b)
	f.deny(t, "k", b)
	f.deny(t, "other", a)
	if err := storetest.Reset(context.Background(), f.cache, "k", []ratekit.Limit{a}); err != nil {
		t.Fatal(err)
	}
	if f.inner.resets.Load() != 1 {
		t.Fatalf("store resets: %d", f.inner.resets.Load())
	}
	if d := f.asked(t, "k", 1, a); !d.Allowed {
		t.Fatalf("after Reset: %+v", d)
	}
	f.asked(t, "k", 1, a, b) // its entry went with a's: b still denies, in the store
	f.cached(t, "k", 1, b)
	f.cached(t, "other", 1, a)
}

// gated is a store whose Take decides, then waits for release.
type gated struct {
	ratekit.Store
	decided, release chan struct{}
}

func (s gated) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (g gated) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	d, err := storetest.Take(ctx, g.Store, key, limits, cost)
	g.decided <- struct{}{}
	<-g.release
	return d, err
}

// TestResetInFlight: a denial the store made before a Reset and returned
// after it is not cached.
func TestResetInFlight(t *testing.T) {
	f := newFixture(t)
	l := ratekit.FixedWindow(1, time.Minute)
	f.take(t, "k", 1, l)
	g := gated{f.inner, make(chan struct{}), make(chan struct{})}
	cache := denycache.New(g, denycache.WithClock(f.clock.Now), denycache.WithMargin(0))
	done := make(chan ratekit.Decision)
	go func() {
		d, _ := storetest.Take(context.Background(), cache, "k", []ratekit.Limit{l}, 1)
		done <- d
	}()
	<-g.decided
	if err := storetest.Reset(context.Background(), cache, "k", []ratekit.Limit{l}); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	if d := <-done; d.Allowed {
		t.Fatalf("the in-flight call: %+v, want the store's denial", d)
	}
	go func() { <-g.decided }()
	d, err := storetest.Take(context.Background(), cache, "k", []ratekit.Limit{l}, 1)
	if err != nil || !d.Allowed || d.Cached {
		t.Fatalf("after Reset: %+v, %v; want the store's admission", d, err)
	}
}

// TestBlockLimits: with a limit that has a penalty block, a denial is
// cached only while that limit is in its block (a store call could start
// it), and only until the block ends.
func TestBlockLimits(t *testing.T) {
	f := newFixture(t)
	guard := ratekit.FixedWindow(3, time.Hour).Block(time.Hour).Named("guard")
	tight := ratekit.FixedWindow(1, 10*time.Minute).Named("tight")
	f.take(t, "k", 1, guard, tight)
	for range 2 { // tight denies, guard admits: not cached
		if d := f.asked(t, "k", 1, guard, tight); d.Allowed || d.Blocked {
			t.Fatalf("%+v", d)
		}
	}
	f.take(t, "k", 2, guard) // guard: 3 of 3 used
	if d := f.asked(t, "k", 1, guard, tight); !d.Blocked || d.RetryAfter != time.Hour {
		t.Fatalf("guard's block: %+v", d)
	}
	f.cached(t, "k", 1, guard, tight)
	f.clock.Advance(time.Hour - time.Millisecond)
	f.cached(t, "k", 1, guard, tight)
	f.clock.Advance(time.Millisecond)
	f.asked(t, "k", 1, guard, tight)
}

// TestNotCached: admissions, unsatisfiable costs, Suppressed limits,
// custom algorithms' stores and errors always reach the store.
func TestNotCached(t *testing.T) {
	f := newFixture(t)
	for range 3 {
		f.asked(t, "k", 1, ratekit.FixedWindow(100, time.Minute))
		f.asked(t, "k", 2, ratekit.FixedWindow(1, time.Minute).Named("one"))
	}
	sup := ratekit.Suppressed(1, time.Minute, 1)
	for range 3 {
		f.asked(t, "s", 1, sup)
	}
	f.take(t, "fail", 1, ratekit.FixedWindow(1, time.Minute))
	f.cache = denycache.New(failing{f.inner}, denycache.WithClock(f.clock.Now))
	for range 3 {
		if _, err := storetest.Take(context.Background(), f.cache, "fail", []ratekit.Limit{ratekit.FixedWindow(1, time.Minute)}, 1); err == nil {
			t.Fatal("no error")
		}
	}
	if f.inner.takes.Load() != 2*3+3+1+3 {
		t.Fatalf("store calls: %d", f.inner.takes.Load())
	}
}

// failing decides in its inner store and then fails.
type failing struct{ ratekit.Store }

func (s failing) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s failing) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	d, _ := storetest.Take(ctx, s.Store, key, limits, cost)
	return d, errors.New("ratekit: test: the reply was lost")
}

// TestPeek: a Peek denial is cached as a Take of cost 1, and answers
// Takes; a Take denial of cost 1 answers Peeks.
func TestPeek(t *testing.T) {
	f := newFixture(t)
	l := ratekit.FixedWindow(1, time.Minute)
	f.take(t, "k", 1, l)
	d, err := storetest.Peek(context.Background(), f.cache, "k", []ratekit.Limit{l})
	if err != nil || d.Allowed || d.Cached || f.inner.peeks.Load() != 1 {
		t.Fatalf("first Peek: %+v %v", d, err)
	}
	f.cached(t, "k", 1, l)
	f.take(t, "j", 1, l)
	f.deny(t, "j", l)
	if d, _ := storetest.Peek(context.Background(), f.cache, "j", []ratekit.Limit{l}); !d.Cached || f.inner.peeks.Load() != 1 {
		t.Fatalf("Peek after a Take denial: %+v", d)
	}
}
