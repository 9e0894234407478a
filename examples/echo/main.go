// Command echo is the ratekit Echo example: an Echo service whose routes are
// rate limited per client IP through ratekitecho, over the in-process store.
//
//	go run . -addr 127.0.0.1:8080 -quota 5 -window 1m
//	curl -i 127.0.0.1:8080/api/hello
//
// Routes: GET /api/hello (quota per window per client IP), POST /login (5
// attempts per 15 minutes per client IP, TOO_MANY_ATTEMPTS), GET /healthz
// (not limited). The client IP is the socket peer; Echo's c.RealIP is not
// used, since without an IPExtractor it trusts X-Forwarded-For.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratekit/ratekit"
	ratekitecho "github.com/ratekit/ratekit/adapters/echo"
	"github.com/ratekit/ratekit/response"
	"github.com/ratekit/ratekit/store/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	quota := flag.Int64("quota", 10, "requests per window on /api/")
	window := flag.Duration("window", time.Minute, "window length")
	flag.Parse()
	if err := run(*addr, *quota, *window); err != nil {
		fmt.Fprintln(os.Stderr, "echo example:", err)
		os.Exit(1)
	}
}

// newRouter builds the example's routes over one in-process store.
func newRouter(quota int64, window time.Duration) (http.Handler, error) {
	store := memstore.New()
	e := echo.New()
	e.HideBanner = true
	e.Use(middleware.Recover())
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })

	limiter, err := ratekit.New(store, ratekit.FixedWindow(quota, window).Named("api"))
	if err != nil {
		return nil, err
	}
	g := e.Group("/api", ratekitecho.Middleware(limiter, ratekitecho.ByIP()))
	g.GET("/hello", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"hello": "world", "remaining": c.Response().Header().Get("X-RateLimit-Remaining")})
	})

	logins, err := ratekit.New(store, ratekit.FixedWindow(5, 15*time.Minute).Named("login"))
	if err != nil {
		return nil, err
	}
	e.POST("/login", func(c echo.Context) error {
		return c.JSON(http.StatusUnauthorized, map[string]string{"error": "invalid credentials"})
	}, ratekitecho.Middleware(logins, ratekitecho.ByIP(),
		ratekitecho.WithErrorCode(response.CodeTooManyAttempts), ratekitecho.WithErrorPolicy(ratekit.FailClosed)))
	return e, nil
}

func run(addr string, quota int64, window time.Duration) error {
	h, err := newRouter(quota, window)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	slog.Info("ratekit echo example", "addr", addr, "quota", quota, "window", window)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
