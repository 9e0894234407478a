package bench

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// interceptors are the unary server interceptors compared: a no-op, and
// ratekitgrpc keyed by peer IP over memstore and over a real Redis, with a
// quota that never denies, counting every method (the health service too).
func interceptors(b *testing.B) []struct {
	name string
	in   grpc.UnaryServerInterceptor
} {
	b.Helper()
	memL, err := ratekit.New(memstore.New(), ratekit.FixedWindow(1<<40, time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	client := redistest.RealStandalone(b).NewClient(nil)
	b.Cleanup(func() { client.Close() })
	rs, err := redisstore.New(client, redisstore.WithPrefix(redistest.Prefix(b)))
	if err != nil {
		b.Fatal(err)
	}
	redisL, err := ratekit.New(rs, ratekit.FixedWindow(1<<40, time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name string
		in   grpc.UnaryServerInterceptor
	}{
		{"noop", func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(ctx, req)
		}},
		{"ratekit-memstore", ratekitgrpc.UnaryServerInterceptor(memL, ratekitgrpc.ByIP(), ratekitgrpc.WithoutDefaultSkips())},
		{"ratekit-redis", ratekitgrpc.UnaryServerInterceptor(redisL, ratekitgrpc.ByIP(), ratekitgrpc.WithoutDefaultSkips())},
	}
}

// headerStream is the server transport stream of a call without a
// transport: it takes the header metadata the interceptor sets.
type headerStream struct{ md metadata.MD }

func (s *headerStream) Method() string                  { return "/bench.Service/Call" }
func (s *headerStream) SetHeader(md metadata.MD) error  { s.md = md; return nil }
func (s *headerStream) SendHeader(md metadata.MD) error { return nil }
func (s *headerStream) SetTrailer(md metadata.MD) error { return nil }

// BenchmarkGRPCInterceptor measures what a unary server interceptor costs a
// call, without a transport: each call's context names one of 10,000 peer
// addresses; the handler does nothing.
func BenchmarkGRPCInterceptor(b *testing.B) {
	info := &grpc.UnaryServerInfo{FullMethod: "/bench.Service/Call"}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	for _, tc := range interceptors(b) {
		b.Run(tc.name, func(b *testing.B) {
			ctxs := make([]context.Context, nkeys)
			for i := range ctxs {
				addr := &net.TCPAddr{IP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)), Port: 1234}
				ctxs[i] = peer.NewContext(context.Background(), &peer.Peer{Addr: addr})
			}
			for _, ctx := range ctxs { // every peer's state exists before timing
				if _, err := tc.in(grpc.NewContextWithServerTransportStream(ctx, &headerStream{}), nil, info, handler); err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(7919))
				stream := &headerStream{}
				for pb.Next() {
					ctx := grpc.NewContextWithServerTransportStream(ctxs[i%nkeys], stream)
					if _, err := tc.in(ctx, nil, info, handler); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

// BenchmarkGRPCCall measures whole unary calls (the health service's Check)
// through a real gRPC server and client over loopback, behind each
// interceptor: what the interceptor adds to a call as a client sees it.
func BenchmarkGRPCCall(b *testing.B) {
	for _, tc := range interceptors(b) {
		b.Run(tc.name, func(b *testing.B) {
			srv := grpc.NewServer(grpc.UnaryInterceptor(tc.in))
			healthpb.RegisterHealthServer(srv, health.NewServer())
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			go func() { _ = srv.Serve(ln) }()
			defer srv.Stop()
			conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			client := healthpb.NewHealthClient(conn)
			req := &healthpb.HealthCheckRequest{}
			if _, err := client.Check(context.Background(), req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := client.Check(context.Background(), req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
