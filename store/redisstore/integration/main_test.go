package integration_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

func TestMain(m *testing.M) {
	if os.Getenv(leaseChildEnv) != "" { // the instance TestLeaseKill kills
		os.Exit(leaseChild())
	}
	redistest.Main(m)
}

// ok is the protected handler of the HTTP tests: 200 "handler".
var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = io.WriteString(w, "handler")
})

// response is what a test request got.
type response struct {
	Status int
	Header http.Header
	Body   string
}

// get sends GET url with the given header pairs (name, value, ...).
func get(t testing.TB, url string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, string(body)}
}

// leaks reports whether a body shows internal error text: an address, the
// store's name, a network error or the library's own error prefix.
func leaks(r response) bool {
	body := strings.ToLower(r.Body)
	for _, s := range []string{"dial", "127.0.0.1", "redis", "timeout", "refused", "ratekit:"} {
		if strings.Contains(body, s) {
			return true
		}
	}
	return false
}

// redisLimiter returns a Limiter on the shared standalone Redis, under a
// fresh prefix.
func redisLimiter(t *testing.T, limits ...ratekit.Limit) *ratekit.Limiter {
	t.Helper()
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := ratekit.New(s, limits...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// serve starts a real HTTP server around the middleware.
func serve(t *testing.T, l *ratekit.Limiter, key ratekit.KeyFunc, opts ...ratekit.Option) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(ratekit.Middleware(l, key, opts...)(ok))
	t.Cleanup(srv.Close)
	return srv
}
