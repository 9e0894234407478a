package ratekitotel_test

import (
	"testing"

	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/observe/observetest"
)

// TestDecisions runs every scenario of observetest (middleware decisions,
// shadow limits, store errors, invalid keys, near limits, fallback stores,
// lockouts, concurrent and unknown outcomes, InFlight slots held and
// released) and compares every data point the reader collects with the counts
// it expects.
func TestDecisions(t *testing.T) {
	observetest.Run(t, func(t *testing.T) (observe.Observer, func(observetest.Want)) {
		m, reader := newMetrics(t)
		return m, func(w observetest.Want) { check(t, reader, w) }
	})
}
