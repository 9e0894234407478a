package plans_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/plans"
	"github.com/ratekit/ratekit/store/memstore"
)

// Free keys get 2 requests a minute, pro keys 100; the plan comes from the
// API key.
func Example() {
	p, err := plans.New(memstore.New(), map[string][]ratekit.Limit{
		"free": {ratekit.FixedWindow(2, time.Minute).Named("free")},
		"pro":  {ratekit.FixedWindow(100, time.Minute).Named("pro")},
	})
	if err != nil {
		panic(err)
	}
	planOf := map[string]string{"key-1": "free", "key-2": "pro"} // in practice: your key store
	plan := func(r *http.Request) (string, error) { return planOf[r.Header.Get("X-Api-Key")], nil }
	h := p.Middleware(plan, ratekit.ByHeader("X-Api-Key"))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	for _, key := range []string{"key-1", "key-1", "key-1", "key-2"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Api-Key", key)
		h.ServeHTTP(w, r)
		fmt.Println(key, w.Code, w.Header().Get("RateLimit-Policy"))
	}
	// Output:
	// key-1 200 "free";q=2;w=60
	// key-1 200 "free";q=2;w=60
	// key-1 429 "free";q=2;w=60
	// key-2 200 "pro";q=100;w=60
}
