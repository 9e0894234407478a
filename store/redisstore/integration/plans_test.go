package integration_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/plans"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestPlansOnBothStores: over HTTP, two API keys on two plans get their own
// quotas and headers, alike on the in-process store and on real Redis.
func TestPlansOnBothStores(t *testing.T) {
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	rs, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{"k-free": "free", "k-pro": "pro"}
	plan := func(r *http.Request) (string, error) { return owners[r.Header.Get("X-Api-Key")], nil }
	var runs [][]string
	for _, store := range []ratekit.Store{memstore.New(), rs} {
		p, err := plans.New(store, map[string][]ratekit.Limit{
			"free": {ratekit.FixedWindow(3, time.Minute).Named("free")},
			"pro":  {ratekit.GCRA(10, time.Minute, 6).Named("pro")},
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(p.Middleware(plan, ratekit.ByHeader("X-Api-Key"))(ok))
		var seen []string
		for _, key := range []string{"k-free", "k-pro"} {
			for range 8 {
				r := get(t, srv.URL, "X-Api-Key", key)
				seen = append(seen, key+" "+http.StatusText(r.Status)+" "+r.Header.Get("X-RateLimit-Limit")+" "+
					r.Header.Get("X-RateLimit-Remaining")+" "+r.Header.Get("RateLimit-Policy"))
			}
		}
		srv.Close()
		runs = append(runs, seen)
	}
	for i, line := range runs[0] {
		if line != runs[1][i] {
			t.Errorf("request %d: in process %q, Redis %q", i, line, runs[1][i])
		}
	}
	want := map[int]string{
		2: `k-free OK 3 0 "free";q=3;w=60`, 3: `k-free Too Many Requests 3 0 "free";q=3;w=60`,
		13: `k-pro OK 6 0 "pro";q=6;w=36`, 14: `k-pro Too Many Requests 6 0 "pro";q=6;w=36`,
	}
	for i, w := range want {
		if runs[1][i] != w {
			t.Errorf("request %d on Redis: %q, want %q", i, runs[1][i], w)
		}
	}
}
