package observe_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// Decision logs at debug level, and a function counting denials.
func Example() {
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(1, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	logs := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: dropTimeAndLatency}))
	denials := 0
	countDenials := observe.Func(func(_ context.Context, e observe.Event) {
		if e.Outcome == observe.Denied {
			denials++ // a real observer must be safe for concurrent use
		}
	})
	h := ratekit.Middleware(limiter, ratekit.ByIP(), ratekit.WithObserver(observe.Log(logs), countDenials))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 2 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	fmt.Println("denials:", denials)
	// Output:
	// level=DEBUG msg="ratekit decision" outcome=allowed policy=api quota=1 remaining=0 cost=1
	// level=DEBUG msg="ratekit decision" outcome=denied policy=api quota=1 remaining=0 cost=1
	// denials: 1
}

// dropTimeAndLatency keeps the example's output the same on every run.
func dropTimeAndLatency(groups []string, a slog.Attr) slog.Attr {
	if a.Key == "latency" {
		return slog.Attr{}
	}
	return dropTime(groups, a)
}
