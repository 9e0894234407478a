package rueidisstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

// A Limiter on Redis through rueidis: 100 requests a minute per subject.
func Example() {
	client, err := rueidis.NewClient(rueidisstore.ClientOption("127.0.0.1:6379"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	store, err := rueidisstore.New(client, rueidisstore.WithPrefix("myapp"))
	if err != nil {
		fmt.Println(err)
		return
	}
	limiter, err := ratekit.New(store, ratekit.FixedWindow(100, time.Minute).Named("api"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	d, err := limiter.Allow(ctx, "203.0.113.7")
	fmt.Println(d.Allowed, d.Remaining, err)
}
