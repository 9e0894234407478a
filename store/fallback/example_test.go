package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
)

// unreachable stands in for a Redis store whose server is down.
type unreachable struct{}

var errUnreachable = errors.New("dial tcp 10.0.0.5:6379: connect: connection refused")

func (s unreachable) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (unreachable) Take(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errUnreachable
}

func (unreachable) Peek(context.Context, string, []ratekit.Limit) (ratekit.Decision, error) {
	return ratekit.Decision{}, errUnreachable
}

func (unreachable) Reset(context.Context, string, []ratekit.Limit) error { return errUnreachable }

// Two instances share a limit of 4 per minute in Redis. While Redis is down,
// each instance decides alone with its share, 2, and no request fails; after
// 3 failed calls the breaker opens and Redis is no longer asked, until a
// background probe finds it back.
func Example() {
	redis := unreachable{} // in production: redisstore.New(client)
	s, err := fallback.New(redis, memstore.New(), fallback.Config{
		Instances: 2,
		OnChange: func(open bool, err error) {
			fmt.Printf("breaker open=%v: %v\n", open, err)
		},
	})
	if err != nil {
		panic(err)
	}
	limiter, err := ratekit.New(s, ratekit.FixedWindow(4, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	for range 4 {
		d, err := limiter.Allow(context.Background(), "alice")
		fmt.Printf("allowed=%v remaining=%d of %d fallback=%v err=%v\n",
			d.Allowed, d.Remaining, d.Limit.Spec().Quota, d.Fallback, err)
	}
	// Output:
	// allowed=true remaining=1 of 2 fallback=true err=<nil>
	// allowed=true remaining=0 of 2 fallback=true err=<nil>
	// breaker open=true: dial tcp 10.0.0.5:6379: connect: connection refused
	// allowed=false remaining=0 of 2 fallback=true err=<nil>
	// allowed=false remaining=0 of 2 fallback=true err=<nil>
}
