package ratekit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// TestInFlightClientHangsUp: clients that hang up do not free their slots
// while their handlers, which ignore cancellation, still run: ten waves of
// 4 clients on InFlight(4) never run more than 4 handlers at once, and the
// requests of later waves are refused until the handlers return.
func TestInFlightClientHangsUp(t *testing.T) {
	l := newLimiter(t, ratekit.InFlight(4).Named("conc"))
	release := make(chan struct{})
	entered, gone := make(chan struct{}, 100), make(chan struct{}, 100)
	var inside, most, ran atomic.Int64
	h := ratekit.Middleware(l, ratekit.ByHeader("X-Key"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		ran.Add(1)
		entered <- struct{}{}
		<-r.Context().Done() // the client hung up; the work goes on
		gone <- struct{}{}
		<-release
		inside.Add(-1)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before srv.Close, which waits for the handlers
	var hung sync.WaitGroup
	for wave := range 10 {
		for range 4 {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			req.Header.Set("X-Key", "a")
			hung.Add(1)
			go func() {
				defer hung.Done()
				if res, err := http.DefaultClient.Do(req); err == nil {
					res.Body.Close()
				}
			}()
			if wave == 0 {
				<-entered // the first wave takes every slot
			}
			cancel() // the client hangs up
		}
		hung.Wait()
		if wave == 0 {
			for range 4 {
				<-gone // the server saw every hang-up
			}
		}
		// The slots stay taken as long as the handlers run.
		if status := probe(srv.URL); status != http.StatusTooManyRequests {
			t.Fatalf("wave %d: a request while 4 handlers run: %d, want 429 (0: admitted, its handler ran)", wave, status)
		}
	}
	if most.Load() != 4 || ran.Load() != 4 {
		t.Fatalf("%d handlers at once, %d ran; want 4 and 4", most.Load(), ran.Load())
	}
	free()
	srv.Close() // waits for the handlers, and the releases after them
	if d, err := l.Peek(context.Background(), "a"); err != nil || d.Remaining != 4 {
		t.Fatalf("after the handlers returned: %+v, %v; want 4 slots free", d, err)
	}
}

// probe asks once for subject "a" and returns the status, or 0 when no
// answer came within a second (the request was admitted and its handler
// holds it).
func probe(url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("X-Key", "a")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}
