// Command gin is the ratekit Gin example: a Gin service whose routes are
// rate limited per client IP through ratekitgin, over the in-process store.
//
//	go run . -addr 127.0.0.1:8080 -quota 5 -window 1m
//	curl -i 127.0.0.1:8080/api/hello
//
// Routes: GET /api/hello (quota per window per client IP), POST /login (5
// attempts per 15 minutes per client IP, TOO_MANY_ATTEMPTS), GET /healthz
// (not limited). The client IP is the socket peer; Gin's c.ClientIP is not
// used, since a default Gin engine trusts every proxy.
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

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	ratekitgin "github.com/ratekit/ratekit/adapters/gin"
	"github.com/ratekit/ratekit/response"
	"github.com/ratekit/ratekit/store/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	quota := flag.Int64("quota", 10, "requests per window on /api/")
	window := flag.Duration("window", time.Minute, "window length")
	flag.Parse()
	if err := run(*addr, *quota, *window); err != nil {
		fmt.Fprintln(os.Stderr, "gin example:", err)
		os.Exit(1)
	}
}

// newRouter builds the example's routes over one in-process store.
func newRouter(quota int64, window time.Duration) (http.Handler, error) {
	store := memstore.New()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })

	limiter, err := ratekit.New(store, ratekit.FixedWindow(quota, window).Named("api"))
	if err != nil {
		return nil, err
	}
	g := r.Group("/api", ratekitgin.Middleware(limiter, ratekitgin.ByIP()))
	g.GET("/hello", func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"hello": "world", "remaining": c.Writer.Header().Get("X-RateLimit-Remaining")})
	})

	logins, err := ratekit.New(store, ratekit.FixedWindow(5, 15*time.Minute).Named("login"))
	if err != nil {
		return nil, err
	}
	r.POST("/login", ratekitgin.Middleware(logins, ratekitgin.ByIP(),
		ratekitgin.WithErrorCode(response.CodeTooManyAttempts), ratekitgin.WithErrorPolicy(ratekit.FailClosed)),
		func(c *gin.Context) { c.JSON(http.StatusUnauthorized, gin.H{"error": "invalid credentials"}) })
	return r, nil
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
	slog.Info("ratekit gin example", "addr", addr, "quota", quota, "window", window)
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
