package integration_test

import (
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/redisstore"
)

// callCounter counts the calls that reach a store.
type callCounter struct {
	ratekit.Store
	n *atomic.Int64
}

func (s callCounter) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (c callCounter) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	c.n.Add(1)
	return storetest.Take(ctx, c.Store, key, limits, cost)
}

// cachedCounter counts the decisions observed with Cached set.
type cachedCounter struct{ n atomic.Int64 }

func (c *cachedCounter) Observe(_ context.Context, e observe.Event) {
	if e.Cached {
		c.n.Add(1)
	}
}

// TestDenyCacheExactness runs 4 instances of a service, each with its own
// Redis client, redisstore and deny cache, and sends them 200 concurrent
// requests at a quota of 100: exactly 100 get 200, 20 times over, per
// algorithm, on standalone Redis and on the cluster. A second burst gets 200
// × 429; then every instance answers one more request from its cache,
// without a Redis call.
func TestDenyCacheExactness(t *testing.T) {
	deployments := []struct {
		name   string
		limits []ratekit.Limit
		client func(t *testing.T) func() redis.UniversalClient
	}{
		{"standalone", []ratekit.Limit{
			ratekit.FixedWindow(100, time.Hour), ratekit.SlidingWindow(100, time.Hour), ratekit.SlidingLog(100, time.Hour),
			ratekit.GCRA(100, time.Hour, 100), ratekit.TokenBucket(100, time.Hour, 100), ratekit.LeakyBucket(100, 100, time.Hour),
		}, func(t *testing.T) func() redis.UniversalClient {
			s := redistest.Standalone(t)
			return func() redis.UniversalClient { return s.NewClient(nil) }
		}},
		{"cluster", []ratekit.Limit{ratekit.FixedWindow(100, time.Hour), ratekit.GCRA(100, time.Hour, 100)},
			func(t *testing.T) func() redis.UniversalClient {
				c := redistest.StartCluster(t)
				return func() redis.UniversalClient { return c.NewClient(nil) }
			}},
	}
	for _, dep := range deployments {
		t.Run(dep.name, func(t *testing.T) {
			newClient := dep.client(t)
			for _, limit := range dep.limits {
				t.Run(limit.Spec().Algorithm, func(t *testing.T) {
					prefix := redistest.Prefix(t)
					var calls atomic.Int64
					var cached cachedCounter
					var urls []string
					for range 4 {
						c := newClient()
						t.Cleanup(func() { c.Close() })
						rs, err := redisstore.New(c, redisstore.WithPrefix(prefix))
						if err != nil {
							t.Fatal(err)
						}
						l, err := ratekit.New(denycache.New(callCounter{rs, &calls}), limit)
						if err != nil {
							t.Fatal(err)
						}
						key := ratekit.Join(ratekit.ByIP(), ratekit.ByHeader("X-Run"))
						mw := ratekit.Middleware(l, key, ratekit.WithTimeout(5*time.Second), ratekit.WithObserver(&cached))
						srv := httptest.NewServer(mw(ok))
						t.Cleanup(srv.Close)
						urls = append(urls, srv.URL)
					}
					client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
					t.Cleanup(client.CloseIdleConnections)
					var secondCalls int64
					for run := range 20 {
						codes, err := httpBurst(client, urls, fmt.Sprint(run), 200)
						if err != nil {
							t.Fatal(err)
						}
						if codes[200] != 100 || codes[429] != 100 {
							t.Fatalf("run %d: status counts %v, want exactly 100 × 200 and 100 × 429", run, codes)
						}
						before := calls.Load()
						if codes, err = httpBurst(client, urls, fmt.Sprint(run), 200); err != nil || codes[429] != 200 {
							t.Fatalf("run %d, second burst: %v, %v; want 200 × 429", run, codes, err)
						}
						secondCalls += calls.Load() - before
						for i, url := range urls {
							before, hits := calls.Load(), cached.n.Load()
							res, err := client.Do(runRequest(url, fmt.Sprint(run)))
							if err != nil {
								t.Fatal(err)
							}
							res.Body.Close()
							if res.StatusCode != 429 || calls.Load() != before || cached.n.Load() != hits+1 {
								t.Fatalf("run %d, instance %d after the bursts: %d, %d Redis calls, %d cached; want a cached 429",
									run, i, res.StatusCode, calls.Load()-before, cached.n.Load()-hits)
							}
						}
					}
					t.Logf("second bursts: %d of %d requests reached Redis", secondCalls, 20*200)
				})
			}
		})
	}
}

// runRequest is a GET of url in run (the X-Run header names the subject).
func runRequest(url, run string) *http.Request {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Run", run)
	return req
}
