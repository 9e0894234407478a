package reputation_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/memstore"
)

// Violations lower a tenant's reputation, faster when they come in rapid
// fire; a good request recovers it slowly once the tenant has violations.
func ExamplePolicy() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	store := memstore.New(memstore.WithClock(func() time.Time { return now }))
	p := reputation.DefaultPolicy()
	ctx := context.Background()

	for _, gap := range []time.Duration{0, 2 * time.Second, 300 * time.Millisecond} {
		now = now.Add(gap)
		r, _ := store.RecordViolation(ctx, "tenant-7", p)
		fmt.Printf("violation: score %.2f, kept %v\n", r.Score, r.TTL)
	}
	r, _ := store.RecordGood(ctx, "tenant-7", p)
	fmt.Printf("good:      score %.4f after %d violations\n", r.Score, r.Violations)
	// Output:
	// violation: score 0.90, kept 30m0s
	// violation: score 0.80, kept 30m0s
	// violation: score 0.68, kept 1h0m0s
	// good:      score 0.6817 after 3 violations
}
