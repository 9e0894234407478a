package ratekitecho_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratekit/ratekit"
	ratekitecho "github.com/ratekit/ratekit/adapters/echo"
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
	return serve(h, path, "192.0.2.1:1234", http.Header{"X-Key": {"a"}})
}

// TestReservedStatus: under WithCountIf, the status the client gets decides
// the count, including the status Echo's HTTPErrorHandler gives an error
// the handler returns, and a panic that middleware.Recover answers; each
// request gives its InFlight slot back, and an error's body is written once.
func TestReservedStatus(t *testing.T) {
	l, clk := limiter(t, ratekit.InFlight(1).Named("conc"), ratekit.FixedWindow(10, time.Minute).Named("api"))
	e := echo.New()
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true, DisableErrorHandler: false}))
	e.Use(ratekitecho.Middleware(l, ratekitecho.ByHeader("X-Key"), clk,
		ratekitecho.WithCountIf(func(status int) bool { return status < 500 })))
	e.GET("/status/:code", func(c echo.Context) error {
		code, _ := strconv.Atoi(c.Param("code"))
		return c.NoContent(code)
	})
	e.GET("/error/:code", func(c echo.Context) error {
		code, _ := strconv.Atoi(c.Param("code"))
		return echo.NewHTTPError(code, "no")
	})
	e.GET("/plain", func(echo.Context) error { return errors.New("internal") })
	e.GET("/panic", func(echo.Context) error { panic("boom") })
	for i, s := range []struct {
		path   string
		status int
		body   string
	}{
		{"/status/200", 200, ""}, {"/error/502", 502, `{"message":"no"}` + "\n"},
		{"/plain", 500, `{"message":"Internal Server Error"}` + "\n"}, {"/panic", 500, ""},
		{"/error/404", 404, `{"message":"no"}` + "\n"}, {"/status/503", 503, ""},
	} {
		rec := keyed(e, s.path)
		if rec.Code != s.status || (s.body != "" && rec.Body.String() != s.body) {
			t.Fatalf("request %d %s: %d %q, want %d %q", i+1, s.path, rec.Code, rec.Body, s.status, s.body)
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
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			if ratekit.ReservationFrom(c.Request().Context()) != nil {
				t.Error("the Reservation outlives the chain in c.Request()")
			}
			return err
		}
	})
	e.Use(ratekitecho.Middleware(l, ratekitecho.ByHeader("X-Key"), clk, ratekitecho.WithCost(100), ratekitecho.WithSettle()))
	e.GET("/used/:n", func(c echo.Context) error {
		used, _ := strconv.ParseInt(c.Param("n"), 10, 64)
		ctx := c.Request().Context()
		return ratekit.ReservationFrom(ctx).Settle(ctx, used)
	})
	for _, n := range []string{"7", "130", "0"} {
		if rec := keyed(e, "/used/"+n); rec.Code != 200 {
			t.Fatalf("/used/%s: %d %s", n, rec.Code, rec.Body)
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
	e := echo.New()
	e.Use(ratekitecho.Middleware(l, ratekitecho.ByHeader("X-Key"), clk))
	entered, gone, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	e.GET("/hold", func(c echo.Context) error {
		close(entered)
		<-c.Request().Context().Done() // the client went away; the work goes on
		close(gone)
		<-done
		return nil
	})
	srv := httptest.NewServer(e)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/hold", nil)
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
	if n := remaining(t, l, "a")["conc"]; n != 0 {
		close(done)
		t.Fatalf("%d slots free while the request is held, want 0", n)
	}
	cancel()
	if err := <-errc; err == nil {
		close(done)
		t.Fatal("the cancelled request got a response")
	}
	<-gone
	if n := remaining(t, l, "a")["conc"]; n != 0 {
		close(done)
		t.Fatalf("%d slots free while the handler of a request whose client went away runs, want 0", n)
	}
	close(done)
	srv.Close() // waits for the handler and the release after it
	if n := remaining(t, l, "a")["conc"]; n != 1 {
		t.Fatalf("%d slots free once the handler returned, want 1", n)
	}
}
