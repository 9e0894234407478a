// Command grpc is the ratekit gRPC example: an echo service whose calls are
// rate limited per client IP through ratekitgrpc's interceptors. It runs on
// the in-process store unless a Redis URL is given, and answers the same
// either way.
//
//	go run . -addr 127.0.0.1:9090 -quota 10 -window 1m [-redis redis://127.0.0.1:6379/0]
//	grpcurl -plaintext 127.0.0.1:9090 list
//	grpcurl -plaintext -d '{"message":"hi"}' 127.0.0.1:9090 ratekit.examples.echo.Echo/UnaryEcho
//
// Service ratekit.examples.echo.Echo: UnaryEcho, and
// BidirectionalStreamingEcho, charged once per stream when it opens. Each
// client IP (the peer's address) gets -quota calls and streams per -window;
// past it, calls get RESOURCE_EXHAUSTED with google.rpc.RetryInfo and
// google.rpc.QuotaFailure. Server reflection and the health service are
// not limited.
//
// Flags: -addr (default 127.0.0.1:9090), -redis (default $REDIS_URL; empty
// means the in-process store), -quota (default 10), -window (default 1m),
// -prefix (Redis key prefix, default ratekit-demo).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/examples/grpc/echopb"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "listen address")
	redisURL := flag.String("redis", os.Getenv("REDIS_URL"), "Redis URL (default $REDIS_URL); empty: the in-process store")
	quota := flag.Int64("quota", 10, "calls and streams per window per client IP")
	window := flag.Duration("window", time.Minute, "window length")
	prefix := flag.String("prefix", "ratekit-demo", "Redis key prefix")
	flag.Parse()
	if err := run(*addr, *redisURL, *prefix, *quota, *window); err != nil {
		fmt.Fprintln(os.Stderr, "grpc example:", err)
		os.Exit(1)
	}
}

// newServer returns the example's gRPC server: the echo service behind the
// interceptors, reflection and health checks beside it.
func newServer(store ratekit.Store, quota int64, window time.Duration) (*grpc.Server, error) {
	limiter, err := ratekit.New(store, ratekit.FixedWindow(quota, window).Named("echo"))
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(limiter, ratekitgrpc.ByIP())),
		grpc.ChainStreamInterceptor(ratekitgrpc.StreamServerInterceptor(limiter, ratekitgrpc.ByIP())),
	)
	echopb.RegisterEchoServer(srv, echoServer{})
	healthpb.RegisterHealthServer(srv, health.NewServer()) // not limited: skipped by default
	reflection.Register(srv)                               // not limited either
	return srv, nil
}

func run(addr, redisURL, prefix string, quota int64, window time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, where, closeStore, err := openStore(ctx, redisURL, prefix)
	if err != nil {
		return err
	}
	defer closeStore()
	srv, err := newServer(store, quota, window)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	slog.Info("ratekit gRPC example: "+where, "addr", ln.Addr().String(), "quota", quota, "window", window)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		srv.GracefulStop()
		return nil
	}
}
