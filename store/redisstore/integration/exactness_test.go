package integration_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestHTTPExactness runs 4 instances of a service (4 HTTP servers, each with
// its own Redis client, store, limiter and middleware) and sends them 200
// concurrent requests: exactly 100 get 200 and 100 get 429, 20 times over,
// per algorithm, on standalone Redis and on the cluster.
func TestHTTPExactness(t *testing.T) {
	deployments := map[string]func(t *testing.T) func() redis.UniversalClient{
		"standalone": func(t *testing.T) func() redis.UniversalClient {
			s := redistest.Standalone(t)
			return func() redis.UniversalClient { return s.NewClient(nil) }
		},
		"cluster": func(t *testing.T) func() redis.UniversalClient {
			c := redistest.StartCluster(t)
			return func() redis.UniversalClient { return c.NewClient(nil) }
		},
	}
	for _, dep := range []string{"standalone", "cluster"} {
		t.Run(dep, func(t *testing.T) {
			newClient := deployments[dep](t)
			for _, limit := range []ratekit.Limit{ratekit.FixedWindow(100, time.Hour), ratekit.GCRA(100, time.Hour, 100)} {
				t.Run(string(limit.Spec().Algorithm), func(t *testing.T) {
					prefix := redistest.Prefix(t)
					var urls []string
					for range 4 {
						c := newClient()
						t.Cleanup(func() { c.Close() })
						s, _ := redisstore.New(c, redisstore.WithPrefix(prefix))
						l, err := ratekit.New(s, limit)
						if err != nil {
							t.Fatal(err)
						}
						key := ratekit.Join(ratekit.ByIP(), ratekit.ByHeader("X-Run"))
						srv := httptest.NewServer(ratekit.Middleware(l, key, ratekit.WithTimeout(5*time.Second))(ok))
						t.Cleanup(srv.Close)
						urls = append(urls, srv.URL)
					}
					client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
					t.Cleanup(client.CloseIdleConnections)
					for run := range 20 {
						codes, err := httpBurst(client, urls, fmt.Sprint(run), 200)
						if err != nil {
							t.Fatal(err)
						}
						if codes[200] != 100 || codes[429] != 100 {
							t.Fatalf("run %d: status counts %v, want exactly 100 × 200 and 100 × 429", run, codes)
						}
					}
				})
			}
		})
	}
}

func httpBurst(client *http.Client, urls []string, run string, n int) (map[int]int, error) {
	var mu sync.Mutex
	codes := map[int]int{}
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func(url string) {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("X-Run", run)
			res, err := client.Do(req)
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			res.Body.Close()
			mu.Lock()
			codes[res.StatusCode]++
			mu.Unlock()
		}(urls[i%len(urls)])
	}
	close(start)
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	return codes, nil
}
