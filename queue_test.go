package ratekit_test

import (
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestQueueModeWaits: a LeakyBucket in queue mode spaces requests at its leak
// rate: the middleware holds each admitted request for its Delay.
func TestQueueModeWaits(t *testing.T) {
	l, err := ratekit.New(memstore.New(), ratekit.LeakyBucket(10, 10, time.Second).Queue(250*time.Millisecond)) // one per 100 ms
	if err != nil {
		t.Fatal(err)
	}
	h := ratekit.Middleware(l, ratekit.ByIP())(ok)
	var handled []time.Time
	start := time.Now()
	for range 4 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
		handled = append(handled, time.Now())
	}
	for i, at := range handled {
		if min := time.Duration(i) * 100 * time.Millisecond; at.Sub(start) < min-time.Millisecond {
			t.Fatalf("request %d handled after %v, want at least %v", i, at.Sub(start), min)
		}
	}
	// a concurrent burst queues up to 250 ms: delays 0, 100 and 200 ms pass,
	// 300 ms and more is denied
	l2, _ := ratekit.New(memstore.New(), ratekit.LeakyBucket(10, 10, time.Second).Queue(250*time.Millisecond))
	h2 := ratekit.Middleware(l2, ratekit.ByIP())(ok)
	codes := make(chan int, 5)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			h2.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			codes <- rec.Code
		}()
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[200] != 3 || count[429] != 2 {
		t.Fatalf("burst of 5: %v, want 3 × 200 and 2 × 429", count)
	}
}
