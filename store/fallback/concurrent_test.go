package fallback_test

import (
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
)

// tally counts the decisions of one subject by where they were made.
type tally struct{ admitted, denied, localAdmitted, local int }

// hammer makes workers × calls concurrent Takes of lim, worker w's i-th on
// subject(w, i), released together, and tallies them per subject.
func hammer(t *testing.T, s ratekit.Store, lim ratekit.Limit, workers, calls int, subject func(w, i int) string) map[string]tally {
	t.Helper()
	var mu sync.Mutex
	tallies := map[string]tally{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range calls {
				key := subject(w, i)
				d, err := storetest.Take(context.Background(), s, key, []ratekit.Limit{lim}, 1)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				c := tallies[key]
				if d.Allowed {
					c.admitted++
				} else {
					c.denied++
				}
				if d.Fallback {
					c.local++
					if d.Allowed {
						c.localAdmitted++
					}
				}
				tallies[key] = c
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return tallies
}

// Many goroutines through every state of the breaker: exact totals per
// subject in the primary (400) and in the local store (100 of 4
// instances), no call that fails, no primary call while open until a probe
// is due, at most one probe at a time however fast the clock moves.
func TestConcurrentExactTotals(t *testing.T) {
	const workers, calls, subjects = 64, 100, 8 // 800 calls per subject
	r := newRig(t, fallback.Config{Instances: 4, Failures: 3, Retry: 250 * time.Millisecond})
	lim := ratekit.FixedWindow(400, time.Hour).Named("hourly")
	phase := func(name string) func(w, i int) string {
		return func(w, i int) string { return fmt.Sprintf("%s%d", name, (w+i)%subjects) }
	}
	check := func(tallies map[string]tally, admitted int, local bool) {
		t.Helper()
		if len(tallies) != subjects {
			t.Fatalf("%d subjects, want %d", len(tallies), subjects)
		}
		for key, c := range tallies {
			if c.admitted != admitted || c.admitted+c.denied != workers*calls/subjects {
				t.Fatalf("%s: %+v, want exactly %d admitted of %d", key, c, admitted, workers*calls/subjects)
			}
			if local && c.local != c.admitted+c.denied || !local && c.local != 0 {
				t.Fatalf("%s: %d of %d decided locally", key, c.local, c.admitted+c.denied)
			}
		}
	}

	check(hammer(t, r.store, lim, workers, calls, phase("healthy")), 400, false)

	r.primary.state.Store(refused)
	before := r.primary.takes.Load()
	check(hammer(t, r.store, lim, workers, calls, phase("down")), 100, true)
	if failed := r.primary.takes.Load() - before; !r.store.Open() || failed < 3 || failed > workers+2 {
		t.Fatalf("open %v after %d failed primary calls; want open after 3 to %d", r.store.Open(), failed, workers+2)
	}
	before = r.primary.takes.Load()
	check(hammer(t, r.store, lim, workers, calls, phase("open")), 100, true)
	if r.primary.takes.Load() != before || r.primary.peeks.Load() != 0 {
		t.Fatalf("open breaker: %d primary calls, %d probes; want none before a probe is due",
			r.primary.takes.Load()-before, r.primary.peeks.Load())
	}

	// the clock runs while calls come in: probes start, one at a time
	done := make(chan struct{})
	const advances = 50
	go func() {
		defer close(done)
		for range advances {
			r.clock.Advance(250 * time.Millisecond)
		}
	}()
	hammer(t, r.store, lim, workers, calls, phase("probed"))
	<-done
	fallback.WaitProbes(r.store)
	if p := r.primary.peeks.Load(); p < 1 || p > advances || r.primary.maxInPeek.Load() != 1 || !r.store.Open() {
		t.Fatalf("%d probes (at most %d at once), open %v; want 1 to %d, one at a time, still open",
			p, r.primary.maxInPeek.Load(), r.store.Open(), advances)
	}

	r.primary.state.Store(up)
	r.clock.Advance(250 * time.Millisecond)
	r.take(t, "trigger", lim)
	fallback.WaitProbes(r.store)
	if r.store.Open() {
		t.Fatal("the primary is up and a probe was due, yet the breaker is open")
	}
	check(hammer(t, r.store, lim, workers, calls, phase("back")), 400, false)
}
