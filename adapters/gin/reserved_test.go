package ratekitgin_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	ratekitgin "github.com/ratekit/ratekit/adapters/gin"
)

// remaining returns what each limit of l has left for key, by name.
func remaining(t *testing.T, l *ratekit.Limiter, key string) map[string]int64 {
	t.Helper()
	d, err := l.Peek(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{d.Limit.Name(): d.Remaining}
	for _, s := range d.States {
		out[s.Limit.Name()] = s.Remaining
	}
	return out
}

// keyed sends a GET of path with X-Key: a to h.
func keyed(h http.Handler, path string) *httptest.ResponseRecorder {
	return serve(h, path, peer, http.Header{"X-Key": {"a"}})
}

// TestReservedStatus: under WithCountIf, the status the client gets decides
// the count: a 502 written with c.Status, a panic that gin.Recovery turns
// into a 500, and c.AbortWithStatus; each panic gives its InFlight slot back.
func TestReservedStatus(t *testing.T) {
	l, clk := limiter(t, ratekit.InFlight(1).Named("conc"), ratekit.FixedWindow(10, time.Minute).Named("api"))
	e := gin.New()
	e.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, _ any) { c.AbortWithStatus(http.StatusInternalServerError) }))
	e.Use(ratekitgin.Middleware(l, ratekitgin.ByHeader("X-Key"), clk,
		ratekitgin.WithCountIf(func(status int) bool { return status < 500 })))
	e.GET("/status/:code", func(c *gin.Context) {
		code, _ := strconv.Atoi(c.Param("code"))
		c.Status(code)
	})
	e.GET("/panic", func(*gin.Context) { panic("boom") })
	e.GET("/abort", func(c *gin.Context) { c.AbortWithStatus(http.StatusServiceUnavailable) })
	for i, s := range []struct {
		path   string
		status int
	}{{"/status/200", 200}, {"/status/502", 502}, {"/panic", 500}, {"/panic", 500}, {"/abort", 503}, {"/status/404", 404}} {
		if rec := keyed(e, s.path); rec.Code != s.status {
			t.Fatalf("request %d %s: %d, want %d", i+1, s.path, rec.Code, s.status)
		}
	}
	if got := remaining(t, l, "a"); got["conc"] != 1 || got["api"] != 8 {
		t.Fatalf("remaining %v, want conc 1 (every slot back), api 8 (only the 200 and the 404 counted)", got)
	}
}

// TestReservedSettle: the handler finds the Reservation in the request's
// context and settles the real cost; middleware before ratekit's finds its
// own request again once the chain returns, as in net/http.
func TestReservedSettle(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(1000, time.Minute).Named("tokens"))
	e := gin.New()
	e.Use(func(c *gin.Context) {
		c.Next()
		if ratekit.ReservationFrom(c.Request.Context()) != nil {
			t.Error("the Reservation outlives the chain in c.Request")
		}
	})
	e.Use(ratekitgin.Middleware(l, ratekitgin.ByHeader("X-Key"), clk, ratekitgin.WithCost(100), ratekitgin.WithSettle()))
	e.GET("/used/:n", func(c *gin.Context) {
		used, _ := strconv.ParseInt(c.Param("n"), 10, 64)
		if err := ratekit.ReservationFrom(c.Request.Context()).Settle(c.Request.Context(), used); err != nil {
			t.Error(err)
		}
	})
	for _, n := range []string{"7", "130", "0"} {
		if rec := keyed(e, "/used/"+n); rec.Code != 200 {
			t.Fatalf("/used/%s: %d", n, rec.Code)
		}
	}
	if got := remaining(t, l, "a")["tokens"]; got != 1000-137 {
		t.Fatalf("remaining %d, want %d", got, 1000-137)
	}
}

// TestReservedClientGone: a client that goes away leaves its InFlight slot
// taken while its handler still runs; the slot comes back when the handler
// returns.
func TestReservedClientGone(t *testing.T) {
	l, clk := limiter(t, ratekit.InFlight(1).Named("conc"))
	e := gin.New()
	e.Use(ratekitgin.Middleware(l, ratekitgin.ByHeader("X-Key"), clk))
	entered, gone, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	e.GET("/hold", func(c *gin.Context) {
		close(entered)
		<-c.Request.Context().Done() // the client went away; the work goes on
		close(gone)
		<-done
	})
	srv := httptest.NewServer(e)
	defer srv.Close()
	holdPastGone(t, srv, "/hold", entered, gone, done, func() int64 { return remaining(t, l, "a")["conc"] })
}

// holdPastGone sends a request to srv's path that its handler holds (it
// closes entered, then gone once its context ends, then waits for done),
// cancels it, checks once the handler saw the cancellation that free
// reports the slot still taken, lets the handler return (closes done),
// waits for it (srv.Close) and checks that free reports the slot back.
func holdPastGone(t *testing.T, srv *httptest.Server, path string, entered, gone, done chan struct{}, free func() int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	req.Header.Set("X-Key", "a")
	errc := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	<-entered
	if n := free(); n != 0 {
		close(done)
		t.Fatalf("%d slots free while the request is held, want 0", n)
	}
	cancel()
	if err := <-errc; err == nil {
		close(done)
		t.Fatal("the cancelled request got a response")
	}
	<-gone
	if n := free(); n != 0 {
		close(done)
		t.Fatalf("%d slots free while the handler of a request whose client went away runs, want 0", n)
	}
	close(done)
	srv.Close() // waits for the handler and the release after it
	if n := free(); n != 1 {
		t.Fatalf("%d slots free once the handler returned, want 1", n)
	}
}
