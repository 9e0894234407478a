package lease_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/memstore"
)

// A global limit leased from the shared store: after a first lease of one
// unit, the next is sized from the rate the first was spent at, and the
// requests it covers make no store call. In production the inner store is
// the Redis store, shared by every instance.
func Example() {
	shared := memstore.New() // stands for the Redis store
	defer shared.Close()
	global := ratekit.FixedWindow(1000, time.Minute).Named("global")
	ls, err := lease.New(shared, []ratekit.Limit{global}, lease.WithMaxLease(100))
	if err != nil {
		fmt.Println(err)
		return
	}
	l, err := ratekit.New(ls, global)
	if err != nil {
		fmt.Println(err)
		return
	}
	var last ratekit.Decision
	for range 50 {
		if last, err = l.Allow(context.Background(), "all"); err != nil {
			fmt.Println(err)
			return
		}
	}
	st := ls.Stats()
	fmt.Printf("allowed=%v remaining=%d\n", last.Allowed, last.Remaining)
	fmt.Printf("leases=%d spent=%d held=%d\n", st.Leases, st.Spent(), st.Held)
	// Output:
	// allowed=true remaining=950
	// leases=2 spent=50 held=51
}
