package fallback_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
)

// The breaker opens at exactly the Failures-th consecutive failure; every
// failed call is decided locally; once open, the primary gets no call until
// a probe is due.
func TestOpensAfterExactlyFailures(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 3})
	if d := r.take(t, "alice", api); d.Fallback || !d.Allowed || r.primary.takes.Load() != 1 {
		t.Fatalf("healthy primary: %+v, %d primary calls", d, r.primary.takes.Load())
	}
	r.primary.state.Store(refused)
	for i := 1; i <= 3; i++ {
		d := r.take(t, "alice", api)
		if !d.Fallback || !d.Allowed {
			t.Fatalf("failure %d: %+v, want a local decision", i, d)
		}
		if got := r.primary.takes.Load(); got != int64(1+i) {
			t.Fatalf("failure %d: %d primary calls, want %d", i, got, 1+i)
		}
		if open := r.store.Open(); open != (i == 3) {
			t.Fatalf("after %d failures Open() = %v", i, open)
		}
	}
	for range 50 {
		if d := r.take(t, "alice", api); !d.Fallback {
			t.Fatalf("open breaker: %+v", d)
		}
	}
	if got := r.primary.takes.Load() + r.primary.peeks.Load(); got != 4 {
		t.Fatalf("%d primary calls, want 4: the open breaker must not ask the primary before a probe is due", got)
	}
	if got := r.local.takes.Load(); got != 53 {
		t.Fatalf("%d local calls, want 53", got)
	}
	ch := r.changeLog()
	if len(ch) != 1 || !ch[0].open || !errors.Is(ch[0].err, errRefused) {
		t.Fatalf("OnChange calls %+v, want one: open with the primary's error", ch)
	}
}

// A success in between starts the count again: failures must be
// consecutive.
func TestSuccessResetsFailures(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 3})
	for _, state := range []int32{refused, refused, up, refused, refused} {
		r.primary.state.Store(state)
		r.take(t, "alice", api)
	}
	if r.store.Open() {
		t.Fatal("opened after 2 consecutive failures")
	}
	r.take(t, "alice", api)
	if !r.store.Open() {
		t.Fatal("not open after 3 consecutive failures")
	}
}

// While open, a probe starts at most once per Retry, in the background, with
// a Peek (which charges nothing); one that fails leaves the breaker open,
// one that succeeds closes it, and the next call goes to the primary.
func TestProbesEveryRetryAndCloses(t *testing.T) {
	const retry = 250 * time.Millisecond
	r := newRig(t, fallback.Config{Failures: 1, Retry: retry})
	r.primary.state.Store(refused)
	r.take(t, "alice", api) // opens
	step := func(d time.Duration, wantPeeks int64) {
		t.Helper()
		r.clock.Advance(d)
		if dec := r.take(t, "alice", api); !dec.Fallback {
			t.Fatalf("open breaker decided in the primary: %+v", dec)
		}
		fallback.WaitProbes(r.store)
		if got := r.primary.peeks.Load(); got != wantPeeks {
			t.Fatalf("%d probes, want %d", got, wantPeeks)
		}
	}
	step(retry-time.Microsecond, 0) // not yet due
	step(time.Microsecond, 1)       // due: probes, fails
	step(0, 1)                      // the next one is a Retry away
	step(retry-time.Microsecond, 1)
	if !r.store.Open() {
		t.Fatal("a failed probe closed the breaker")
	}
	r.primary.state.Store(up)
	step(time.Microsecond, 2) // succeeds
	if r.store.Open() {
		t.Fatal("a successful probe left the breaker open")
	}
	takes := r.primary.takes.Load()
	d := r.take(t, "alice", api)
	if d.Fallback || r.primary.takes.Load() != takes+1 {
		t.Fatalf("after the probe: %+v, primary calls %d → %d", d, takes, r.primary.takes.Load())
	}
	if d.Remaining != 99 {
		t.Fatalf("remaining %d in the primary, want 99: probes must not charge", d.Remaining)
	}
	ch := r.changeLog()
	if len(ch) != 2 || !ch[0].open || ch[1].open || ch[1].err != nil {
		t.Fatalf("OnChange calls %+v, want open then closed", ch)
	}
}

// A probe runs in the background: the call that starts it returns at once,
// and no second probe starts while it is in flight, however many are due.
func TestOneProbeAtATimeNeverBlocking(t *testing.T) {
	const retry = 10 * time.Millisecond
	r := newRig(t, fallback.Config{Failures: 1, Retry: retry, ProbeTimeout: time.Hour})
	gate, entered := make(chan struct{}), make(chan struct{}, 100)
	r.primary.gate, r.primary.entered = gate, entered
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(gate) }) }) // before the rig waits for probes
	r.primary.state.Store(refused)
	r.take(t, "alice", api)
	for i := range 20 {
		r.clock.Advance(retry)
		if d := r.take(t, "alice", api); !d.Fallback { // returns although the probe is held
			t.Fatalf("%+v", d)
		}
		if i == 0 {
			select {
			case <-entered: // the probe is in flight, held at the gate
			case <-time.After(10 * time.Second):
				t.Fatal("no probe started")
			}
		}
	}
	r.primary.state.Store(up)
	release.Do(func() { close(gate) })
	fallback.WaitProbes(r.store) // every probe started, if there were more
	if got := r.primary.peeks.Load(); got != 1 {
		t.Fatalf("%d probes started while one was in flight, want 1", got)
	}
	if r.store.Open() {
		t.Fatal("the probe succeeded and the breaker is open")
	}
}

// A hung primary uses up the caller's deadline; the call is still decided,
// locally, with a context that has not ended.
func TestHungPrimaryDecidedLocally(t *testing.T) {
	r := newRig(t, fallback.Config{Failures: 2})
	r.primary.state.Store(hung)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	d, err := storetest.Take(ctx, r.store, "alice", []ratekit.Limit{api}, 1)
	if err != nil || !d.Fallback || !d.Allowed {
		t.Fatalf("hung primary: %+v, %v", d, err)
	}
	if r.local.sawDone.Load() {
		t.Fatal("the local store got the ended context")
	}
	if r.store.Open() {
		t.Fatal("one failure of 2 opened the breaker")
	}
}
