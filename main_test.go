package ratekit_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// ok is the protected handler of the HTTP tests.
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "handler")
})

// newLimiter returns a Limiter on a fresh in-process store.
func newLimiter(t *testing.T, limits ...ratekit.Limit) *ratekit.Limiter {
	t.Helper()
	l, err := ratekit.New(memstore.New(), limits...)
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

type response struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, url string, header ...string) response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, string(b)}
}

// leaks reports whether a response shows internal error text.
func leaks(r response) bool {
	for _, s := range []string{"dial", "127.0.0.1", "10.1.2.3", "redis", "timeout", "refused", "secret", "ratekit:"} {
		if strings.Contains(strings.ToLower(r.body), s) {
			return true
		}
	}
	return false
}
