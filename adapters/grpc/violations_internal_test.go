package ratekitgrpc

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// TestConcurrentOnlyWhenEveryDenialIs: a refusal is by InFlight limits alone
// only when every limit that denied is one, even one that shares the
// binding limit's name.
func TestConcurrentOnlyWhenEveryDenialIs(t *testing.T) {
	slots := ratekit.InFlight(1).Named("api")
	rate := ratekit.FixedWindow(10, time.Minute).Named("api")
	d := ratekit.Decision{Limit: slots, RetryAfter: time.Second, States: []ratekit.LimitState{
		{Limit: slots, RetryAfter: time.Second}, {Limit: rate, RetryAfter: 500 * time.Millisecond}}}
	if v, concurrent := decisionViolations(d); concurrent || len(v) != 1 {
		t.Fatalf("%d violations, concurrent %v; want 1, false", len(v), concurrent)
	}
	d.States[1].Limit = ratekit.InFlight(3).Named("api")
	if _, concurrent := decisionViolations(d); !concurrent {
		t.Fatal("two InFlight denials: not concurrent")
	}
}
