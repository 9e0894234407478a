package fallback_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
)

// Errors of the request itself, and the caller's own cancellation, say
// nothing about the primary: they are returned unchanged, decided nowhere
// else, and never open the breaker, even at Failures 1.
func TestRequestErrorsDoNotCount(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 1})
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		key    string
		limits []ratekit.Limit
		cost   int64
		want   error
	}{
		{"empty key", context.Background(), "", []ratekit.Limit{api}, 1, ratekit.ErrEmptyKey},
		{"negative cost", context.Background(), "alice", []ratekit.Limit{api}, -1, ratekit.ErrInvalidCost},
		{"one limit twice", context.Background(), "alice", []ratekit.Limit{api, api}, 1, ratekit.ErrInvalidLimit},
		{"no limits", context.Background(), "alice", nil, 1, ratekit.ErrInvalidLimit},
		{"caller canceled", canceled, "alice", []ratekit.Limit{api}, 1, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			takes, local := r.primary.takes.Load(), r.local.takes.Load()
			d, err := storetest.Take(c.ctx, r.store, c.key, c.limits, c.cost)
			if !errors.Is(err, c.want) || d.Allowed || d.Fallback {
				t.Fatalf("got %+v, %v; want the error %v", d, err, c.want)
			}
			asked := takes + 1
			if errors.Is(c.want, ratekit.ErrInvalidLimit) {
				asked = takes // refused by Prepare: no call
			}
			if r.primary.takes.Load() != asked || r.local.takes.Load() != local {
				t.Fatalf("primary calls %d → %d, local calls %d → %d; want the primary's answer alone",
					takes, r.primary.takes.Load(), local, r.local.takes.Load())
			}
			if r.store.Open() {
				t.Fatal("a request error opened the breaker")
			}
		})
	}
	if ch := r.changeLog(); len(ch) != 0 {
		t.Fatalf("OnChange calls %+v, want none", ch)
	}
}

// A request error found by the local store, after the primary failed, is the
// request's error, not a store failure: the middleware then answers it as a
// bad request.
func TestRequestErrorWhilePrimaryDown(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 1})
	r.primary.state.Store(refused)
	if _, err := storetest.Take(context.Background(), r.store, "alice", []ratekit.Limit{api}, -1); !errors.Is(err, ratekit.ErrInvalidCost) {
		t.Fatalf("closed breaker: %v, want ErrInvalidCost", err)
	}
	if !r.store.Open() {
		t.Fatal("the primary's failure was not counted")
	}
	if _, err := storetest.Take(context.Background(), r.store, "", []ratekit.Limit{api}, 1); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Fatalf("open breaker: %v, want ErrEmptyKey", err)
	}
}

// A caller whose deadline has passed before the call is decided locally: the
// primary is not asked, and nothing is counted against it.
func TestSpentDeadlineDecidedLocally(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 1})
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	d, err := storetest.Take(ctx, r.store, "alice", []ratekit.Limit{api}, 1)
	if err != nil || !d.Fallback || !d.Allowed {
		t.Fatalf("%+v, %v; want a local decision", d, err)
	}
	if r.primary.takes.Load() != 0 || r.store.Open() {
		t.Fatalf("primary asked %d times, open %v", r.primary.takes.Load(), r.store.Open())
	}
}

// A local store that fails too leaves the primary's error to the caller's
// error policy, both causes named.
func TestLocalFailsToo(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 1})
	r.primary.state.Store(refused)
	custom := ratekit.Custom("mine", 10, time.Minute, [3]int64{1}) // memstore cannot run it
	_, err := storetest.Take(context.Background(), r.store, "alice", []ratekit.Limit{custom}, 1)
	if !errors.Is(err, errRefused) || err.Error() == errRefused.Error() {
		t.Fatalf("got %v; want the primary's error, and the local store's beside it", err)
	}
}

// Peek asks the primary as Take does, and falls back as Take does, changing
// no state in either store.
func TestPeek(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 1, Instances: 4})
	r.take(t, "alice", api)
	d, err := storetest.Peek(context.Background(), r.store, "alice", []ratekit.Limit{api})
	if err != nil || d.Fallback || d.Remaining != 99 || r.primary.peeks.Load() != 1 {
		t.Fatalf("healthy: %+v, %v", d, err)
	}
	r.primary.state.Store(refused)
	for range 3 {
		d, err = storetest.Peek(context.Background(), r.store, "alice", []ratekit.Limit{api})
		if err != nil || !d.Fallback || d.Remaining != 25 || d.Limit.Spec().Quota != 25 {
			t.Fatalf("down: %+v, %v; want the local share, 25, untouched", d, err)
		}
	}
	if r.local.peeks.Load() != 3 || r.local.takes.Load() != 0 {
		t.Fatalf("local: %d peeks, %d takes", r.local.peeks.Load(), r.local.takes.Load())
	}
}

// Reset forgets the state in both stores, whatever the breaker says, and
// reports the primary's failure.
func TestReset(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 1, Instances: 2})
	lim := ratekit.FixedWindow(4, time.Minute).Named("small")
	r.take(t, "alice", lim) // primary: 3 left
	r.primary.state.Store(refused)
	r.take(t, "alice", lim)
	r.take(t, "alice", lim) // local: 0 left of 2
	if d := r.take(t, "alice", lim); d.Allowed || !d.Fallback {
		t.Fatalf("local share used up, yet %+v", d)
	}
	if err := storetest.Reset(context.Background(), r.store, "alice", []ratekit.Limit{lim}); !errors.Is(err, errRefused) {
		t.Fatalf("Reset with the primary down: %v, want its error", err)
	}
	if d := r.take(t, "alice", lim); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("after Reset the local share is not back: %+v", d)
	}
	r.primary.state.Store(up)
	if err := storetest.Reset(context.Background(), r.store, "alice", []ratekit.Limit{lim}); err != nil {
		t.Fatal(err)
	}
	if r.primary.resets.Load() != 2 {
		t.Fatalf("primary got %d resets, want 2 (an open breaker does not skip them)", r.primary.resets.Load())
	}
	d, err := storetest.Peek(context.Background(), r.primary.inner, "alice", []ratekit.Limit{lim})
	if err != nil || d.Remaining != 4 {
		t.Fatalf("primary after Reset: %+v, %v", d, err)
	}
}
