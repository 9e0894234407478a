package rueidisstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

// TestStalledReservesTakeNoSlots freezes Redis (SIGSTOP) for 300 ms while 20
// callers reserve an InFlight(4) slot with a 3 s lease (Limiter.Reserve, 100
// ms timeout): rueidis pipelines their calls onto its connection and each
// caller gives up after its timeout. When Redis resumes (SIGCONT) it runs
// the 20 calls, past their deadlines: they take nothing, so the subject's 4
// slots are free at once, not taken for a lease.
func TestStalledReservesTakeNoSlots(t *testing.T) {
	const requests = 20
	srv := redistest.Private(t)
	// One connection, dialled by the first call: a call routed to a
	// connection that still waits for its handshake (rueidis dials each of
	// its PipelineMultiplex connections on first use) would never be sent.
	opt := rueidisstore.ClientOption(srv.Addr)
	opt.PipelineMultiplex = -1
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// Five instances: each sends at most 4 of the subject's reserves to the
	// store at once (InFlight(4)), so the 20 stalled calls come from 4 of
	// each.
	prefix := redistest.Prefix(t)
	var limiters []*ratekit.Limiter
	for range 5 {
		l, err := ratekit.New(newStore(t, c, prefix), ratekit.InFlight(4).Lease(3*time.Second).Named("conc"))
		if err != nil {
			t.Fatal(err)
		}
		limiters = append(limiters, l)
	}
	limiter := limiters[0]
	reserve := func(i int, timeout time.Duration) (*ratekit.Reservation, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return limiters[i%len(limiters)].Reserve(ctx, "stalled", 1)
	}
	// Each instance's first call loads the library and shows its engine
	// Redis's clock.
	for i := range limiters {
		r, err := reserve(i, time.Second)
		if err != nil || !r.Decision.Allowed {
			t.Fatalf("first reserve of instance %d: %+v, %v", i, r, err)
		}
		if err := r.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	calls, _ := redistest.ScriptCPU(srv.Addr)

	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	errs := make([]error, requests)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = reserve(i, 100*time.Millisecond)
		}()
	}
	wg.Wait()
	// The stall lasts 300 ms, as a DEBUG SLEEP 0.3 would: the scenario's
	// length (past the timeout and the engine's margin), not a wait for a race.
	time.Sleep(time.Until(frozen.Add(300 * time.Millisecond)))
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("reserve %d during the stall: %v, want the context's deadline", i, err)
		}
	}
	waitScriptCalls(t, srv.Addr, calls+requests)

	ctx := context.Background()
	if d, err := limiter.Peek(ctx, "stalled"); err != nil || d.Remaining != 4 {
		t.Fatalf("after the stall: %+v, %v; want 4 slots free", d, err)
	}
	for i := range 5 {
		r, err := limiter.Reserve(ctx, "stalled", 1)
		if err != nil || r.Decision.Allowed != (i < 4) {
			t.Fatalf("reserve %d after the stall: %+v, %v; want the first 4 admitted", i, r, err)
		}
		defer r.Release(ctx)
	}
}

// waitScriptCalls waits until the server at addr has run want script calls
// (FCALL, EVALSHA, EVAL) in all: the calls a frozen server was sent ran
// once it resumed.
func waitScriptCalls(t *testing.T, addr string, want float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		calls, _ := redistest.ScriptCPU(addr)
		if calls >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server ran %.0f script calls in 5 s, want %.0f", calls, want)
		}
		time.Sleep(5 * time.Millisecond) // polling the server's progress, not a race in the code
	}
}
