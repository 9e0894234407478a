package redistest

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/store/storetest"

	"github.com/ratekit/ratekit"
)

// ExactLimits are the limits of the exactness tests, one per algorithm (the
// leaky bucket twice: as a meter and in queue mode): each admits exactly 100
// of a burst, as their refill over the test is negligible (1 h).
func ExactLimits() []ratekit.Limit {
	return []ratekit.Limit{
		ratekit.FixedWindow(100, time.Hour),
		ratekit.GCRA(100, time.Hour, 100),
		ratekit.SlidingWindow(100, time.Hour),
		ratekit.SlidingLog(100, time.Hour),
		ratekit.TokenBucket(100, time.Hour, 100),
		ratekit.LeakyBucket(100, 100, time.Hour),
		ratekit.LeakyBucket(100, 100, time.Hour).Queue(time.Hour).Named("leakyq"),
		ratekit.Calendar(100, calendar.Year, nil), // a year: no run straddles a period's end but on New Year's Eve
	}
}

// Burst sends n concurrent Takes of cost 1 for key, round-robin over
// stores, released together, and counts the allowed ones and the errors.
func Burst[S ratekit.Store](stores []S, key string, limits []ratekit.Limit, n int) (allowed, errs int64) {
	var a, e atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func(s S) {
			defer wg.Done()
			<-start
			d, err := storetest.Take(context.Background(), s, key, limits, 1)
			switch {
			case err != nil:
				e.Add(1)
			case d.Allowed:
				a.Add(1)
			}
		}(stores[i%len(stores)])
	}
	close(start)
	wg.Wait()
	return a.Load(), e.Load()
}

// CheckExactness sends 200 concurrent requests of one subject through
// stores (Burst), 20 times over (a new subject each time), for each of
// ExactLimits, and fails t unless exactly 100 are allowed without an error.
func CheckExactness[S ratekit.Store](t *testing.T, stores []S) {
	for _, l := range ExactLimits() {
		t.Run(l.Name(), func(t *testing.T) {
			for run := range 20 {
				allowed, errs := Burst(stores, "subject-"+strconv.Itoa(run), []ratekit.Limit{l}, 200)
				if errs != 0 || allowed != 100 {
					t.Fatalf("run %d: %d allowed, %d errors; want exactly 100 allowed, 0 errors", run, allowed, errs)
				}
			}
		})
	}
}
