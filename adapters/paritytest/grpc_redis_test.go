package paritytest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestGRPCExactness runs 4 instances of a gRPC service (4 servers, each
// with its own Redis client, store, Limiter and interceptor) on one real
// Redis and sends them 500 concurrent calls from one client IP: for every
// algorithm, exactly 100 pass and 400 get ResourceExhausted, nothing else.
// The leaky bucket in queue mode is left out: it admits by delaying calls
// (up to its maximum wait, an hour), not by refusing them.
func TestGRPCExactness(t *testing.T) {
	srv := redistest.RealStandalone(t)
	for _, limit := range redistest.ExactLimits() {
		if limit.Spec().MaxWait > 0 {
			continue
		}
		t.Run(limit.Name(), func(t *testing.T) {
			prefix := redistest.Prefix(t)
			var conns []*grpc.ClientConn
			for range 4 {
				c := srv.NewClient(nil)
				t.Cleanup(func() { c.Close() })
				s, err := redisstore.New(c, redisstore.WithPrefix(prefix))
				if err != nil {
					t.Fatal(err)
				}
				l, err := ratekit.New(s, limit)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, healthServer(t, ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(),
					ratekitgrpc.WithoutDefaultSkips(), ratekitgrpc.WithTimeout(5*time.Second))))
			}
			got := grpcBurst(conns, 500)
			if got[codes.OK] != 100 || got[codes.ResourceExhausted] != 400 || len(got) != 2 {
				t.Fatalf("codes %v, want exactly 100 OK and 400 ResourceExhausted", got)
			}
		})
	}
}

// grpcBurst sends n concurrent health checks, spread over conns, released
// at once, and counts their codes.
func grpcBurst(conns []*grpc.ClientConn, n int) map[codes.Code]int {
	var mu sync.Mutex
	got := map[codes.Code]int{}
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func(conn *grpc.ClientConn) {
			defer wg.Done()
			<-release
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ctx = metadata.AppendToOutgoingContext(ctx, "x-call", fmt.Sprint(i))
			_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			mu.Lock()
			got[status.Code(err)]++
			mu.Unlock()
		}(conns[i%len(conns)])
	}
	close(release)
	wg.Wait()
	return got
}
