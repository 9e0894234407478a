package lockout_test

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit/lockout"
)

// Five attempts at once, then waits that double from a second to 15
// minutes; beside them, at most 100 failures a day.
func ExampleGrowingDelays() {
	delays, err := lockout.GrowingDelays(5, time.Second, 15*time.Minute)
	if err != nil {
		panic(err)
	}
	windows := append(delays, lockout.Window{Scope: "day", Attempts: 100, Window: 24 * time.Hour})
	for _, w := range windows[:3] {
		fmt.Println(w.Scope, w.Attempts, w.Window)
	}
	fmt.Println("...")
	for _, w := range windows[len(windows)-2:] {
		fmt.Println(w.Scope, w.Attempts, w.Window)
	}
	// Output:
	// delay-1 5 1s
	// delay-2 6 2s
	// delay-3 7 4s
	// ...
	// delay-11 15 15m0s
	// day 100 24h0m0s
}
