package denycache_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/memstore"
)

// A deny cache in front of a store: the first denial comes from the store,
// the next ones from the cache until Retry-After. In production the inner
// store is the Redis store, shared by every instance.
func Example() {
	inner := memstore.New()
	defer inner.Close()
	l, err := ratekit.New(denycache.New(inner), ratekit.FixedWindow(2, time.Minute).Named("api"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 4 {
		d, err := l.Allow(context.Background(), "203.0.113.9")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("allowed=%v cached=%v retry-after=%ds\n", d.Allowed, d.Cached, int((d.RetryAfter+time.Second-1)/time.Second))
	}
	// Output:
	// allowed=true cached=false retry-after=0s
	// allowed=true cached=false retry-after=0s
	// allowed=false cached=false retry-after=60s
	// allowed=false cached=true retry-after=60s
}
