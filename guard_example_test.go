package ratekit_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// A Guard runs Middleware's pipeline for a transport of your own: here, a
// message handler keyed by the sending account, whose headers go into an
// http.Header that travels with the reply.
func ExampleNewGuard() {
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute).Named("messages"))
	if err != nil {
		panic(err)
	}
	guard := ratekit.NewGuard(limiter)
	for range 3 {
		header := http.Header{}
		v := guard.Check(context.Background(), "account-42", nil, 1, header)
		if v.Pass {
			fmt.Println("handled;", header.Get("RateLimit"))
			continue
		}
		body := guard.Render(v.Response, header)
		fmt.Println(v.Response.Status, header.Get("Retry-After"), string(body))
	}
	// Output:
	// handled; "messages";r=1;t=60
	// handled; "messages";r=0;t=60
	// 429 60 {"status":429,"code":"RATE_LIMITED","message":"Too many requests. Try again in 60 seconds.","context":{"retryAfter":60,"limit":2,"remaining":0,"policy":"messages"}}
}
