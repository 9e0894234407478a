package ratekit_test

import (
	"net/http/httptest"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/httpcheck"
	"github.com/ratekit/ratekit/store/memstore"
)

// ok is the protected handler of the HTTP tests.
var ok = httpcheck.OK

type reply = httpcheck.Response

var (
	get   = httpcheck.Get
	leaks = httpcheck.Leaks
)

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
