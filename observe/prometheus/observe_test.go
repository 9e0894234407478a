package ratekitprom_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit/observe"
)

// TestConcurrentObserve: goroutines reporting at once, some of them about
// policies not seen before, lose no count (run with -race).
func TestConcurrentObserve(t *testing.T) {
	m, reg := newMetrics(t)
	const workers, each, nPolicies = 8, 500, 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				m.Observe(context.Background(), observe.Event{
					Outcome: observe.Outcome(i % 2), // allowed, denied
					Policy:  fmt.Sprintf("p%d", (w+i)%nPolicies),
					Quota:   10, Remaining: 0, Latency: time.Microsecond,
				})
			}
		}()
	}
	wg.Wait()
	// Each policy gets workers*each/nPolicies events. A worker gives a
	// policy one outcome (i's parity is fixed by (w+i)%4); half the workers
	// give it allowed, half denied.
	per := workers * each / nPolicies
	var ps []map[string]float64
	for p := range nPolicies {
		ps = append(ps, policy(fmt.Sprintf("p%d", p), counts{allowed: per / 2, denied: per / 2, near: per / 2, latency: per}))
	}
	check(t, reg, want(0, ps...))
}

// TestUnknownOutcome: an outcome this version does not know is counted as
// "unknown" and touches nothing else.
func TestUnknownOutcome(t *testing.T) {
	m, reg := newMetrics(t)
	m.Observe(context.Background(), observe.Event{Outcome: observe.Allowed, Policy: "api", Fallback: true})
	m.Observe(context.Background(), observe.Event{Outcome: 99, Policy: "api"})
	w := want(1, policy("api", counts{allowed: 1, fallback: 1}))
	w[`ratekit_decisions_total{outcome="unknown",policy="api"}`] = 1
	check(t, reg, w)
}
