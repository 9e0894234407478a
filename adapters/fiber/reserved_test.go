package ratekitfiber_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/ratekit/ratekit"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
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

// keyed sends a GET of path with X-Key: a to app.
func keyed(app *fiber.App, path string) response {
	return do(app, path, "192.0.2.1:1234", http.Header{"X-Key": {"a"}})
}

// TestReservedStatus: under WithCountIf, the status the client gets decides
// the count, including the status the app's ErrorHandler gives an error the
// handler returns, and a panic that the recover middleware answers; each
// request gives its InFlight slot back, and an error's body is written once.
func TestReservedStatus(t *testing.T) {
	l, clk := limiter(t, ratekit.InFlight(1).Named("conc"), ratekit.FixedWindow(10, time.Minute).Named("api"))
	app := fiber.New()
	app.Use(recover.New())
	app.Use(ratekitfiber.Middleware(l, ratekitfiber.ByHeader("X-Key"), clk,
		ratekitfiber.WithCountIf(func(status int) bool { return status < 500 })))
	app.Get("/status/:code", func(c *fiber.Ctx) error {
		code, _ := strconv.Atoi(c.Params("code"))
		return c.SendStatus(code)
	})
	app.Get("/error/:code", func(c *fiber.Ctx) error {
		code, _ := strconv.Atoi(c.Params("code"))
		return fiber.NewError(code, "no")
	})
	app.Get("/plain", func(*fiber.Ctx) error { return errors.New("internal") })
	app.Get("/panic", func(*fiber.Ctx) error { panic("boom") })
	for i, s := range []struct {
		path   string
		status int
		body   string
	}{
		{"/status/200", 200, "OK"}, {"/error/502", 502, "no"}, {"/plain", 500, "internal"},
		{"/panic", 500, "boom"}, {"/error/404", 404, "no"}, {"/status/503", 503, "Service Unavailable"},
	} {
		if r := keyed(app, s.path); r.status != s.status || r.body != s.body {
			t.Fatalf("request %d %s: %d %q, want %d %q", i+1, s.path, r.status, r.body, s.status, s.body)
		}
	}
	if got := remaining(t, l, "a"); got["conc"] != 1 || got["api"] != 8 {
		t.Fatalf("remaining %v, want conc 1 (every slot back), api 8 (only the 200 and the 404 counted)", got)
	}
}

// TestReservedSettle: the handler finds the Reservation in c.UserContext()
// and settles the real cost; middleware before ratekit's finds its own user
// context again once the chain returns.
func TestReservedSettle(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(1000, time.Minute).Named("tokens"))
	app := fiber.New()
	app.Use(func(c *fiber.Ctx) error {
		err := c.Next()
		if ratekit.ReservationFrom(c.UserContext()) != nil {
			t.Error("the Reservation outlives the chain in c.UserContext()")
		}
		return err
	})
	app.Use(ratekitfiber.Middleware(l, ratekitfiber.ByHeader("X-Key"), clk, ratekitfiber.WithCost(100), ratekitfiber.WithSettle()))
	app.Get("/used/:n", func(c *fiber.Ctx) error {
		used, _ := strconv.ParseInt(c.Params("n"), 10, 64)
		return ratekit.ReservationFrom(c.UserContext()).Settle(c.UserContext(), used)
	})
	for _, n := range []string{"7", "130", "0"} {
		if r := keyed(app, "/used/"+n); r.status != 200 {
			t.Fatalf("/used/%s: %d %s", n, r.status, r.body)
		}
	}
	if got := remaining(t, l, "a")["tokens"]; got != 1000-137 {
		t.Fatalf("remaining %d, want %d", got, 1000-137)
	}
}

// TestReservedContextEnds: when the user context that an earlier
// middleware set ends (a deadline, say), the request's InFlight slot stays
// taken while its handler still runs, and comes back when it returns.
func TestReservedContextEnds(t *testing.T) {
	l, clk := limiter(t, ratekit.InFlight(1).Named("conc"))
	app := fiber.New()
	var cancel context.CancelFunc
	app.Use(func(c *fiber.Ctx) error {
		var ctx context.Context
		ctx, cancel = context.WithCancel(c.UserContext())
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	})
	app.Use(ratekitfiber.Middleware(l, ratekitfiber.ByHeader("X-Key"), clk))
	app.Get("/hold", func(c *fiber.Ctx) error {
		if n := remaining(t, l, "a")["conc"]; n != 0 {
			t.Errorf("%d slots free while the request is held, want 0", n)
		}
		cancel()
		if n := remaining(t, l, "a")["conc"]; n != 0 {
			t.Errorf("%d slots free while the handler of a request whose context ended runs, want 0", n)
		}
		return c.SendString("held")
	})
	if r := keyed(app, "/hold"); r.status != 200 || r.body != "held" {
		t.Fatalf("%d %q", r.status, r.body)
	}
	if n := remaining(t, l, "a")["conc"]; n != 1 {
		t.Fatalf("%d slots free once the handler returned, want 1", n)
	}
}
