package ratekit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// A Suppressed limit admits everything up to its soft limit, then admits
// with a probability that shrinks as the offered rate grows; the draws are
// injectable (here every draw is 0.45, so a call passes while the
// suppression factor is below 0.55).
func ExampleSuppressed() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	store := memstore.New(
		memstore.WithClock(func() time.Time { return now }),
		memstore.WithRandom(func() float64 { return 0.45 }),
	)
	limiter, _ := ratekit.New(store, ratekit.Suppressed(4, time.Second, 2).Named("api"))
	for i := 1; i <= 9; i++ {
		now = now.Add(250 * time.Millisecond) // 4 per second: at the soft limit
		if i > 4 {
			now = now.Add(-200 * time.Millisecond) // then 20 per second
		}
		d, _ := limiter.Allow(context.Background(), "client")
		fmt.Printf("call %d: allowed %v, suppression %.3f\n", i, d.Allowed, d.Suppression)
	}
	// Output:
	// call 1: allowed true, suppression 0.000
	// call 2: allowed true, suppression 0.000
	// call 3: allowed true, suppression 0.000
	// call 4: allowed true, suppression 0.000
	// call 5: allowed true, suppression 0.538
	// call 6: allowed false, suppression 0.640
	// call 7: allowed false, suppression 0.656
	// call 8: allowed false, suppression 0.667
	// call 9: allowed false, suppression 0.658
}
