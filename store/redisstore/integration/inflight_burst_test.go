package integration_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// reserveCounter is a Redis store whose Reserve calls are counted.
type reserveCounter struct {
	*redisstore.Store
	n atomic.Int64
}

func (s *reserveCounter) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s *reserveCounter) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	s.n.Add(1)
	return storetest.Reserve(ctx, s.Store, key, limits, cost)
}

// TestInFlightBurst: 2,000 concurrent requests of one subject through
// Middleware over Redis, with the default options (fail open, 100 ms
// timeout) and InFlight(4), whose handlers hold until every request is in
// a handler or answered: at most 4 handlers run at once, and the requests
// refused are refused by the instance without a store call, so the burst
// cannot make the store calls time out that enforce the limit.
func TestInFlightBurst(t *testing.T) {
	const requests, n = 2000, 4
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	rs, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := &reserveCounter{Store: rs}
	l, err := ratekit.New(s, ratekit.InFlight(n).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	var storeErrs, timeouts atomic.Int64
	report := ratekit.WithErrorHandler(func(_ *http.Request, err error) {
		storeErrs.Add(1)
		if errors.Is(err, context.DeadlineExceeded) {
			timeouts.Add(1)
		}
	})
	var inside, most, ran atomic.Int64
	entered, release := make(chan struct{}, requests), make(chan struct{})
	h := ratekit.Middleware(l, ratekit.ByHeader("X-Key"), report)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		in := inside.Add(1)
		for m := most.Load(); in > m && !most.CompareAndSwap(m, in); m = most.Load() {
		}
		ran.Add(1)
		entered <- struct{}{}
		<-release
		inside.Add(-1)
	}))
	statuses := make(chan int, requests)
	var wg sync.WaitGroup
	begin := time.Now()
	for range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Header.Set("X-Key", "burst")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			statuses <- rec.Code
		}()
	}
	answered := map[int]int{}
	deadline := time.After(30 * time.Second)
	for seen := 0; seen < requests; seen++ { // every request is in a handler or answered
		select {
		case <-entered:
		case code := <-statuses:
			answered[code]++
		case <-deadline:
			close(release)
			t.Fatalf("30 s: %d handlers entered, %v answered of %d", ran.Load(), answered, requests)
		}
	}
	spread := time.Since(begin)
	peek, peekErr := l.Peek(context.Background(), "burst") // the slots Redis holds meanwhile
	close(release)
	wg.Wait()
	calls, refused := s.n.Load(), answered[http.StatusTooManyRequests]
	perRefused := float64(calls-ran.Load()) / float64(max(refused, 1))
	t.Logf("%d requests of one subject on InFlight(%d) over Redis in %v: %d handlers at once, %d ran, %d refused (429), "+
		"other answers %v; %d Reserve calls to the store (%.3f per refused request); %d store errors reported (%d timeouts), failed open; "+
		"Redis held %d of %d slots while the handlers ran (peek: %v)",
		requests, n, spread.Round(time.Millisecond), most.Load(), ran.Load(), refused, answered, calls, perRefused,
		storeErrs.Load(), timeouts.Load(), n-peek.Remaining, n, peekErr)
	if most.Load() > n {
		t.Fatalf("%d handlers ran at once; want at most %d", most.Load(), n)
	}
	if refused != requests-int(ran.Load()) || len(answered) != 1 {
		t.Fatalf("answers %v with %d handlers run; want every other request refused with 429", answered, ran.Load())
	}
	if calls != ran.Load() {
		t.Fatalf("%d Reserve calls for %d requests let through; want one each and none for a refused request", calls, ran.Load())
	}
}
