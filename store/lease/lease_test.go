package lease_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestNewRefuses: limits a lease cannot keep exact, and bad options, are
// errors at construction, each prefixed once and saying what to do.
func TestNewRefuses(t *testing.T) {
	ms := memstore.New()
	defer ms.Close()
	fw := ratekit.FixedWindow(100, time.Minute)
	for _, c := range []struct {
		name   string
		inner  ratekit.Store
		limits []ratekit.Limit
		opts   []lease.Option
		want   string
	}{
		{"gcra", ms, []ratekit.Limit{ratekit.GCRA(10, time.Second, 10)}, nil, `limit "gcra" is gcra, which a lease cannot keep exact`},
		{"token", ms, []ratekit.Limit{ratekit.TokenBucket(10, time.Second, 10)}, nil, "lease FixedWindow or Calendar limits only"},
		{"sliding", ms, []ratekit.Limit{fw, ratekit.SlidingWindow(10, time.Second)}, nil, `limit "sliding" is sliding`},
		{"log", ms, []ratekit.Limit{ratekit.SlidingLog(10, time.Second)}, nil, `limit "log" is log`},
		{"block", ms, []ratekit.Limit{fw.Block(time.Hour)}, nil, "lease it without Block"},
		{"invalid", ms, []ratekit.Limit{ratekit.FixedWindow(0, time.Minute)}, nil, "quota"},
		{"none", ms, nil, nil, "no limits"},
		{"nil store", nil, []ratekit.Limit{fw}, nil, "the inner store is nil"},
		{"lease 0", ms, []ratekit.Limit{fw}, []lease.Option{lease.WithMaxLease(0)}, "at least 1 unit"},
		{"lease > quota", ms, []ratekit.Limit{fw}, []lease.Option{lease.WithMaxLease(101)}, "exceeds the smallest quota, 100"},
		{"interval", ms, []ratekit.Limit{fw}, []lease.Option{lease.WithRefillInterval(0)}, "must be positive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := lease.New(c.inner, c.limits, c.opts...)
			if err == nil || s != nil {
				t.Fatalf("New accepted it: %v", s)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "ratekit: ") || strings.Count(line, "ratekit: ") != 1 {
					t.Fatalf("error line %q is not prefixed once with ratekit: ", line)
				}
			}
		})
	}
}

// TestLeaseSteps follows one instance step by step on a fake clock: the
// first lease is 1 unit, the next is sized from the rate the first was
// spent at (capped by MaxLease), admissions from a lease make no store
// call and report the quota less what was admitted, a refusal is local
// once the window is known to be spent, and the next window starts afresh.
func TestLeaseSteps(t *testing.T) {
	f := newFixture(t, ratekit.FixedWindow(25, time.Second), lease.WithMaxLease(10))
	if got := f.ls.MaxLease(); got != 10 {
		t.Fatalf("MaxLease = %d, want 10", got)
	}
	steps := []struct {
		advance   time.Duration
		allowed   bool
		remaining int64
		reset     time.Duration
		calls     int64 // store calls so far
		units     int64 // units asked for so far
	}{
		{0, true, 24, time.Second, 1, 1},                            // first lease: 1 unit, spent at once
		{time.Millisecond, true, 23, 999 * time.Millisecond, 2, 11}, // 1 unit per ms: 100 per interval, capped to 10
		{0, true, 22, 999 * time.Millisecond, 2, 11},
	}
	for i, s := range steps {
		f.clock.Advance(s.advance)
		d := f.take(t, "k", 1)
		if d.Allowed != s.allowed || d.Remaining != s.remaining || d.ResetAfter != s.reset ||
			f.inner.takes.Load() != s.calls || f.inner.units.Load() != s.units {
			t.Fatalf("step %d: %+v after %d calls for %d units; want allowed=%v remaining=%d reset=%s after %d calls for %d units",
				i, d, f.inner.takes.Load(), f.inner.units.Load(), s.allowed, s.remaining, s.reset, s.calls, s.units)
		}
	}
	// 8 more from the lease: no call; 22 − 8 = 14 left.
	for range 8 {
		f.take(t, "k", 1)
	}
	if d := f.take(t, "k", 1); !d.Allowed || d.Remaining != 13 || f.inner.takes.Load() != 3 {
		t.Fatalf("after the second lease: %+v, %d calls; want remaining 13 after 3 calls", d, f.inner.takes.Load())
	}
	// Spend the rest; the shared window has 25 − 21 = 4 left when the third
	// lease is asked for, and it takes what is left (a lease of the tail).
	if admitted := 12 + f.admitted(t, "k", 20); admitted != 25 {
		t.Fatalf("admitted %d in the window, want exactly 25", admitted)
	}
	if sh := f.shared(t, "k"); sh.Remaining != 0 {
		t.Fatalf("shared Remaining = %d, want 0", sh.Remaining)
	}
	calls := f.inner.takes.Load()
	d := f.take(t, "k", 1)
	if d.Allowed || d.Remaining != 0 || d.RetryAfter != 999*time.Millisecond || f.inner.takes.Load() != calls {
		t.Fatalf("over the quota: %+v after %d more calls; want a local refusal with Retry-After 999ms", d, f.inner.takes.Load()-calls)
	}
	st := f.ls.Stats()
	if st.Taken != 25 || st.Held != 0 || st.Spent() != 25 || st.Lapsed != 0 {
		t.Fatalf("stats %+v, want 25 taken and spent, none held", st)
	}
	// The next window: a lease again, sized from the last rate.
	f.clock.Advance(999 * time.Millisecond)
	if d := f.take(t, "k", 1); !d.Allowed || d.Remaining != 24 || d.ResetAfter != time.Second {
		t.Fatalf("next window: %+v; want admitted, 24 left, reset in 1s", d)
	}
}

// TestNeverPastTheWindow: units held when the window ends are never spent
// in the next one; they lapse, the next window admits exactly its quota,
// and Stats counts them.
func TestNeverPastTheWindow(t *testing.T) {
	// a window from the first request, one on the clock's seconds (the
	// fixture's clock starts at a whole second), and the calendar's minutes
	minute := ratekit.Calendar(100, calendar.Minute, nil)
	for _, l := range []ratekit.Limit{ratekit.FixedWindow(100, time.Second), ratekit.Calendar(100, calendar.Every(time.Second), nil), minute} {
		t.Run(l.String(), func(t *testing.T) {
			f := newFixture(t, l, lease.WithMaxLease(50))
			f.lease(t, "k") // a lease of 50, 49 left
			if st := f.ls.Stats(); st.Held != 49 || st.Taken != 51 {
				t.Fatalf("stats %+v, want 49 held of 51 taken", st)
			}
			if l == minute {
				f.clock.Advance(59 * time.Second)
			}
			f.clock.Advance(999 * time.Millisecond) // the window ends
			if admitted := f.admitted(t, "k", 300); admitted != 100 {
				t.Fatalf("the next window admitted %d, want exactly 100", admitted)
			}
			st := f.ls.Stats()
			if st.Lapsed != 49 || st.Held != 0 || st.Spent() != 102 {
				t.Fatalf("stats %+v, want 49 lapsed, 102 spent", st)
			}
		})
	}
}

// TestOtherCallsPassThrough: other limits, cost 0, costs above the quota
// and empty keys go to the inner store as they are.
func TestOtherCallsPassThrough(t *testing.T) {
	f := newFixture(t, ratekit.FixedWindow(10, time.Minute))
	other := ratekit.FixedWindow(10, time.Minute).Named("other")
	ctx := context.Background()
	for i := range 3 {
		d, err := storetest.Take(ctx, f.ls, "k", []ratekit.Limit{other}, 1)
		if err != nil || !d.Allowed || d.Remaining != int64(9-i) || f.inner.takes.Load() != int64(i+1) {
			t.Fatalf("other limit, call %d: %+v %v after %d calls", i, d, err, f.inner.takes.Load())
		}
	}
	if d := f.take(t, "k", 11); d.Allowed || !d.Unsatisfiable {
		t.Fatalf("cost 11 of 10: %+v, want the store's unsatisfiable refusal", d)
	}
	if d := f.take(t, "k", 0); !d.Allowed || d.Remaining != 10 {
		t.Fatalf("cost 0: %+v", d)
	}
	if _, err := storetest.Take(ctx, f.ls, "", []ratekit.Limit{f.limit}, 1); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Fatalf("empty key: %v, want ErrEmptyKey", err)
	}
	if st := f.ls.Stats(); st.Leases != 0 {
		t.Fatalf("stats %+v, want no lease", st)
	}
}

// TestReset drops the lease: nothing held survives a Reset through this
// Store, the window starts afresh, and Stats counts the dropped units.
func TestReset(t *testing.T) {
	f := newFixture(t, ratekit.FixedWindow(10, time.Minute), lease.WithMaxLease(5))
	f.lease(t, "k") // a lease of 5, 4 left
	if err := storetest.Reset(context.Background(), f.ls, "k", []ratekit.Limit{f.limit}); err != nil {
		t.Fatal(err)
	}
	if st := f.ls.Stats(); st.Dropped != 4 || st.Held != 0 {
		t.Fatalf("stats %+v, want 4 dropped, none held", st)
	}
	if admitted := f.admitted(t, "k", 30); admitted != 10 {
		t.Fatalf("after Reset the window admitted %d, want exactly 10", admitted)
	}
}

// TestPeek answers from the lease without spending it, and otherwise asks
// the inner store.
func TestPeek(t *testing.T) {
	f := newFixture(t, ratekit.FixedWindow(10, time.Minute), lease.WithMaxLease(5))
	ctx := context.Background()
	limits := []ratekit.Limit{f.limit}
	if d, err := storetest.Peek(ctx, f.ls, "k", limits); err != nil || !d.Allowed || d.Remaining != 10 {
		t.Fatalf("Peek before any lease: %+v %v", d, err)
	}
	f.lease(t, "k") // 4 held, 4 left in the shared window
	calls := f.inner.takes.Load()
	for range 3 {
		if d, err := storetest.Peek(ctx, f.ls, "k", limits); err != nil || !d.Allowed || d.Remaining != 8 {
			t.Fatalf("Peek with a lease: %+v %v; want allowed, 8 left", d, err)
		}
	}
	if st := f.ls.Stats(); st.Held != 4 || f.inner.takes.Load() != calls {
		t.Fatalf("Peek spent: %+v", st)
	}
}

// failing is a store whose Takes fail while down is set.
type failing struct {
	ratekit.Store
	down bool
}

var errDown = errors.New("ratekit: test: the store is down")

func (s *failing) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s *failing) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	if s.down {
		return ratekit.Decision{}, errDown
	}
	return storetest.Take(ctx, s.Store, key, limits, cost)
}

// TestStoreDown: while the inner store fails, units held are still spent;
// a call they cannot cover gets the store's error, for the error policy.
func TestStoreDown(t *testing.T) {
	ms := memstore.New()
	defer ms.Close()
	inner := &failing{Store: ms}
	limit := ratekit.FixedWindow(100, time.Minute)
	ls, err := lease.New(inner, []ratekit.Limit{limit}, lease.WithMaxLease(10), lease.WithRefillInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	take := func() (ratekit.Decision, error) { return storetest.Take(ctx, ls, "k", []ratekit.Limit{limit}, 1) }
	for range 2 { // 1, then a lease of 10 (an hour's worth at any rate)
		if _, err := take(); err != nil {
			t.Fatal(err)
		}
	}
	held := ls.Stats().Held
	inner.down = true
	for i := range held {
		if d, err := take(); err != nil || !d.Allowed {
			t.Fatalf("held unit %d while the store is down: %+v %v", i, d, err)
		}
	}
	if _, err := take(); !errors.Is(err, errDown) {
		t.Fatalf("past the lease while the store is down: %v, want the store's error", err)
	}
	inner.down = false
	if d, err := take(); err != nil || !d.Allowed {
		t.Fatalf("store back: %+v %v", d, err)
	}
}

// fallingBack is a store whose answers say a fallback store made them.
type fallingBack struct{ *counting }

func (s fallingBack) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.counting).Prepare(limits)
}

func (s fallingBack) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	d, err := storetest.Take(ctx, s.counting, key, limits, cost)
	d.Fallback = true
	return d, err
}

// TestNoLeaseFromAFallback: a decision a fallback store made locally is
// the call's answer, and the next calls go to it at their own cost.
func TestNoLeaseFromAFallback(t *testing.T) {
	ms := memstore.New()
	defer ms.Close()
	inner := fallingBack{&counting{Store: ms}}
	limit := ratekit.FixedWindow(100, time.Minute)
	ls, err := lease.New(inner, []ratekit.Limit{limit}, lease.WithMaxLease(10))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		d, err := storetest.Take(context.Background(), ls, "k", []ratekit.Limit{limit}, 1)
		if err != nil || !d.Allowed || !d.Fallback {
			t.Fatalf("call %d: %+v %v", i, d, err)
		}
	}
	if n, u := inner.takes.Load(), inner.units.Load(); n != 5 || u != 5 {
		t.Fatalf("%d calls for %d units; want 5 calls of 1 unit", n, u)
	}
	if st := ls.Stats(); st.Leases != 0 || st.Held != 0 {
		t.Fatalf("stats %+v: leased from a fallback", st)
	}
}

// TestMaxSubjects: past the bound, a new subject is decided by the inner
// store, exactly; once the leases of the others lapse, it is leased again.
func TestMaxSubjects(t *testing.T) {
	f := newFixture(t, ratekit.FixedWindow(100, time.Second), lease.WithMaxSubjects(2), lease.WithMaxLease(10))
	f.lease(t, "a")
	f.lease(t, "b")
	calls := f.inner.takes.Load()
	for range 3 {
		f.take(t, "c", 1)
	}
	if got := f.inner.takes.Load() - calls; got != 3 {
		t.Fatalf("a third subject made %d store calls for 3 Takes, want 3", got)
	}
	f.clock.Advance(time.Second) // a and b lapse
	calls = f.inner.takes.Load()
	f.lease(t, "c")
	for range 5 {
		f.take(t, "c", 1)
	}
	if got := f.inner.takes.Load() - calls; got != 2 {
		t.Fatalf("after the others lapsed, c made %d store calls for 7 Takes, want 2 (a lease of 1, then of 10)", got)
	}
}

// switching is a store that answers from primary until fallBack is set,
// then from local, saying so (Decision.Fallback), as a fallback store does.
type switching struct {
	primary, local ratekit.Store
	fallBack       atomic.Bool
}

func (s *switching) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (s *switching) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	if !s.fallBack.Load() {
		return storetest.Take(ctx, s.primary, key, limits, cost)
	}
	d, err := storetest.Take(ctx, s.local, key, limits, cost)
	d.Fallback = true
	return d, err
}

func (s *switching) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	return storetest.Peek(ctx, s.primary, key, limits)
}

func (s *switching) Reset(ctx context.Context, key string, limits []ratekit.Limit) error {
	return storetest.Reset(ctx, s.primary, key, limits)
}

// failover is a lease store (MaxLease 10) of one limit over a store that
// answers from primary until told to fail over to local, which counts its
// calls.
type failover struct {
	primary *memstore.Store
	local   *counting
	inner   *switching
	ls      *lease.Store
	limits  []ratekit.Limit
}

func newFailover(t *testing.T) *failover {
	t.Helper()
	primary, ms := memstore.New(), memstore.New()
	t.Cleanup(func() { primary.Close(); ms.Close() })
	f := &failover{primary: primary, local: &counting{Store: ms}, limits: []ratekit.Limit{ratekit.FixedWindow(100, time.Minute)}}
	f.inner = &switching{primary: primary, local: f.local}
	ls, err := lease.New(f.inner, f.limits, lease.WithMaxLease(10))
	if err != nil {
		t.Fatal(err)
	}
	f.ls = ls
	return f
}

// TestFallbackAtTheCallsCost: when the primary fails over to a local
// store as a refill asks for a whole lease, and the local store has room
// for the call but not the lease, the call is asked again at its own cost
// and passes.
func TestFallbackAtTheCallsCost(t *testing.T) {
	f := newFailover(t)
	ms, local, inner, ls, limits := f.local.Store, f.local, f.inner, f.ls, f.limits
	ctx := context.Background()
	if _, err := storetest.Take(ctx, ms, "k", limits, 99); err != nil { // the local share has 1 left
		t.Fatal(err)
	}
	for ls.Stats().Taken < 10 { // the instance is busy: its leases grow
		if d, err := storetest.Take(ctx, ls, "k", limits, 1); err != nil || !d.Allowed {
			t.Fatalf("before the failover: %+v %v", d, err)
		}
	}
	for ls.Stats().Held > 0 {
		if d, err := storetest.Take(ctx, ls, "k", limits, 1); err != nil || !d.Allowed {
			t.Fatalf("spending the lease: %+v %v", d, err)
		}
	}
	inner.fallBack.Store(true)
	d, err := storetest.Take(ctx, ls, "k", limits, 1)
	if err != nil || !d.Allowed || !d.Fallback {
		t.Fatalf("after the failover: %+v %v; want admitted by the local store, which has 1 unit left", d, err)
	}
	if n, u := local.takes.Load(), local.units.Load(); n != 2 || u < 3 {
		t.Fatalf("the local store was asked %d times for %d units; want a lease (refused), then the call's 1 unit", n, u)
	}
}

// TestFallbackCompletesFromTheLease: a call of cost 5 finds 3 units held;
// the primary has failed over, and the local store admits the 2 the
// refill asks: the call takes the 3 held units too, so that they are not
// spent again by later calls.
func TestFallbackCompletesFromTheLease(t *testing.T) {
	f := newFailover(t)
	primary, local, inner, ls, limits := f.primary, f.local, f.inner, f.ls, f.limits
	ctx := context.Background()
	// 13 units left in the shared window: a lease of 1, spent, then one
	// of 10, spent down to 3 held, leave 2 there, so a call of cost 5
	// asks the store for exactly the 2 it lacks.
	if _, err := storetest.Take(ctx, primary, "k", limits, 87); err != nil {
		t.Fatal(err)
	}
	for ls.Stats().Taken < 11 || ls.Stats().Held > 3 {
		if d, err := storetest.Take(ctx, ls, "k", limits, 1); err != nil || !d.Allowed {
			t.Fatalf("before the failover: %+v %v", d, err)
		}
	}
	if st := ls.Stats(); st.Taken != 11 || st.Held != 3 {
		t.Fatalf("before the failover: %+v; want 11 units taken, 3 held", st)
	}
	inner.fallBack.Store(true)
	if d, err := storetest.Take(ctx, ls, "k", limits, 5); err != nil || !d.Allowed || !d.Fallback {
		t.Fatalf("cost 5 after the failover: %+v %v; want admitted", d, err)
	}
	if st := ls.Stats(); st.Held != 0 || local.units.Load() != 2 {
		t.Fatalf("after it: %d units held, %d charged locally; want 0 held (spent by the call) and 2 charged", st.Held, local.units.Load())
	}
}

// TestSpentWithAnIdleLimit: two leased limits, an hour's 100 and a
// second's 100. Once the hour is spent and the second's window has lapsed
// (the shared store holds no state for it: refused calls charge nothing),
// refusals are answered locally until the hour ends, as with one limit:
// one store call, not one per refusal.
func TestSpentWithAnIdleLimit(t *testing.T) {
	c := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	ms := memstore.New(memstore.WithClock(c.Now))
	defer ms.Close()
	inner := &counting{Store: ms}
	limits := []ratekit.Limit{ratekit.FixedWindow(100, time.Hour).Named("hour"), ratekit.FixedWindow(100, time.Second).Named("second")}
	ls, err := lease.New(inner, limits, lease.WithClock(c.Now), lease.WithMargin(0), lease.WithMaxLease(10))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for admitted := 0; admitted < 100; {
		d, err := storetest.Take(ctx, ls, "k", limits, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
	}
	c.Advance(2 * time.Second)
	calls := inner.takes.Load()
	for i := range 100 {
		d, err := storetest.Take(ctx, ls, "k", limits, 1)
		if err != nil || d.Allowed || d.RetryAfter < time.Hour-3*time.Second {
			t.Fatalf("call %d after the hour was spent: %+v %v; want refused until the hour ends", i, d, err)
		}
	}
	if n := inner.takes.Load() - calls; n > 1 {
		t.Fatalf("100 refusals made %d store calls, want at most 1", n)
	}
	c.Advance(time.Hour)
	if d, err := storetest.Take(ctx, ls, "k", limits, 1); err != nil || !d.Allowed {
		t.Fatalf("the next hour: %+v %v", d, err)
	}
}

// TestWindowStartedAfterARefusal: two leased limits, an hour's and a
// second's. A refill refused by the hour's window while the second's had
// lapsed makes a lease that knows no end for the second; the debit that
// follows starts a new second's window, and its units are spent only
// within it: after that second they lapse.
func TestWindowStartedAfterARefusal(t *testing.T) {
	c := storetest.NewClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	ms := memstore.New(memstore.WithClock(c.Now))
	defer ms.Close()
	inner := &counting{Store: ms}
	hour, second := ratekit.FixedWindow(100, time.Hour).Named("hour"), ratekit.FixedWindow(100, time.Second).Named("second")
	limits := []ratekit.Limit{hour, second}
	ls, err := lease.New(inner, limits, lease.WithClock(c.Now), lease.WithMargin(0), lease.WithMaxLease(10),
		lease.WithRefillInterval(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	take := func(what string) ratekit.Decision {
		t.Helper()
		d, err := storetest.Take(ctx, ls, "k", limits, 1)
		if err != nil || !d.Allowed {
			t.Fatalf("%s: %+v %v", what, d, err)
		}
		return d
	}
	take("a lease of 1")
	take("a lease of 10")                                                              // 9 held
	if _, err := storetest.Take(ctx, ms, "k", []ratekit.Limit{hour}, 84); err != nil { // 5 left in the hour
		t.Fatal(err)
	}
	c.Advance(2 * time.Second) // the second's window and the lease lapse
	take("after the second lapsed")
	if st := ls.Stats(); st.Held != 4 {
		t.Fatalf("%+v: want a refused lease of 10, then one of the 5 left, 1 spent: 4 held", st)
	}
	c.Advance(time.Second) // the new second's window ends, and the 4 units held lapse with it
	if d, err := storetest.Take(ctx, ls, "k", limits, 1); err != nil || d.Allowed {
		t.Fatalf("the next second: %+v %v; want refused: the hour's last units were leased, and those held lapsed with their second", d, err)
	}
}
