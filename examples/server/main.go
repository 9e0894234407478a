// Command server is the ratekit demo: a net/http service whose routes are
// rate limited per client IP through Redis.
//
//	go run ./examples/server                      # embedded in-process Redis
//	go run ./examples/server -redis redis://127.0.0.1:6379/0
//
// Routes: GET / (an index), and GET /fixed, /gcra, /sliding, /log, /token,
// /leaky and /multi (two limits at once), each limited per client IP.
//
// Flags: -addr (default :8080), -redis (default $REDIS_URL; empty means an
// embedded miniredis), -quota (default 10), -window (default 1m), -prefix
// (key prefix, default ratekit-demo).
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

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

type config struct {
	addr, redisURL, prefix string
	quota                  int64
	window                 time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.addr, "addr", ":8080", "listen address")
	flag.StringVar(&c.redisURL, "redis", os.Getenv("REDIS_URL"), "Redis URL (default $REDIS_URL); empty: embedded in-process Redis")
	flag.Int64Var(&c.quota, "quota", 10, "requests per window (GCRA: rate per window, burst = quota)")
	flag.DurationVar(&c.window, "window", time.Minute, "window length")
	flag.StringVar(&c.prefix, "prefix", "ratekit-demo", "Redis key prefix")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	client, where, closeRedis, err := connect(c.redisURL)
	if err != nil {
		return err
	}
	defer closeRedis()
	slog.Info("ratekit demo: store "+where, "addr", c.addr, "quota", c.quota, "window", c.window, "prefix", c.prefix)

	handler, err := newHandler(client, c, where)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: c.addr, Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
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

// connect returns a client of the Redis at url, or of an embedded miniredis
// when url is empty, and says which in where.
func connect(url string) (client *redis.Client, where string, closeFn func(), err error) {
	if url == "" {
		m, err := miniredis.Run()
		if err != nil {
			return nil, "", nil, err
		}
		client = redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		return client, "embedded in-process Redis (miniredis) at " + m.Addr() + "; set -redis or REDIS_URL to use a real one",
			func() { client.Close(); m.Close() }, nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, "", nil, fmt.Errorf("-redis: %w", err)
	}
	opts.ContextTimeoutEnabled = true // the middleware's 100 ms timeout applies to socket I/O too
	client = redis.NewClient(opts)
	return client, "Redis at " + opts.Addr, func() { client.Close() }, nil
}
