// Command fiber is the ratekit Fiber example: a Fiber service whose routes
// are rate limited per client IP through ratekitfiber, over the in-process
// store.
//
//	go run . -addr 127.0.0.1:8080 -quota 5 -window 1m
//	curl -i 127.0.0.1:8080/api/hello
//
// Routes: GET /api/hello (quota per window per client IP), POST /login (5
// attempts per 15 minutes per client IP, TOO_MANY_ATTEMPTS), GET /healthz
// (not limited). The client IP is the socket peer (ratekitfiber.ByIP), not
// c.IP.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/ratekit/ratekit"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
	"github.com/ratekit/ratekit/response"
	"github.com/ratekit/ratekit/store/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	quota := flag.Int64("quota", 10, "requests per window on /api/")
	window := flag.Duration("window", time.Minute, "window length")
	flag.Parse()
	if err := run(*addr, *quota, *window); err != nil {
		fmt.Fprintln(os.Stderr, "fiber example:", err)
		os.Exit(1)
	}
}

// newApp builds the example's routes over one in-process store.
func newApp(quota int64, window time.Duration) (*fiber.App, error) {
	store := memstore.New()
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(recover.New())
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })

	limiter, err := ratekit.New(store, ratekit.FixedWindow(quota, window).Named("api"))
	if err != nil {
		return nil, err
	}
	g := app.Group("/api", ratekitfiber.Middleware(limiter, ratekitfiber.ByIP()))
	g.Get("/hello", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"hello": "world", "remaining": c.GetRespHeader("X-RateLimit-Remaining")})
	})

	logins, err := ratekit.New(store, ratekit.FixedWindow(5, 15*time.Minute).Named("login"))
	if err != nil {
		return nil, err
	}
	app.Post("/login", ratekitfiber.Middleware(logins, ratekitfiber.ByIP(),
		ratekitfiber.WithErrorCode(response.CodeTooManyAttempts), ratekitfiber.WithErrorPolicy(ratekit.FailClosed)),
		func(c *fiber.Ctx) error {
			return c.Status(fiber.StatusUnauthorized).JSON(fiber.Map{"error": "invalid credentials"})
		})
	return app, nil
}

func run(addr string, quota int64, window time.Duration) error {
	app, err := newApp(quota, window)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- app.Listen(addr) }()
	slog.Info("ratekit fiber example", "addr", addr, "quota", quota, "window", window)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return app.ShutdownWithContext(shutdown)
	}
}
