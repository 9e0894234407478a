package integration_test

import (
	"net/http/httptest"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/httpcheck"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/redisstore/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// ok is the protected handler of the HTTP tests.
var ok = httpcheck.OK

type response = httpcheck.Response

var (
	get   = httpcheck.Get
	leaks = httpcheck.Leaks
)

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
