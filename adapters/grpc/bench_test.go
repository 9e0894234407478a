package ratekitgrpc_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/store/memstore"
)

// headerStream is the server transport stream of a call without a
// transport: it drops the metadata the interceptor sets.
type headerStream struct{}

func (headerStream) Method() string               { return unaryMethod }
func (headerStream) SetHeader(metadata.MD) error  { return nil }
func (headerStream) SendHeader(metadata.MD) error { return nil }
func (headerStream) SetTrailer(metadata.MD) error { return nil }

// BenchmarkOverhead measures what the unary interceptor costs a call,
// without a transport (memstore, 10,000 peer addresses, all allowed, legacy
// and IETF fields), and with an InFlight limit, whose slot each call takes
// and releases (two store calls). Each call's context can be cancelled, as
// gRPC's are, so the release on cancellation is armed and disarmed.
func BenchmarkOverhead(b *testing.B) {
	info := &grpc.UnaryServerInfo{FullMethod: unaryMethod}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	for _, bc := range []struct {
		name  string
		limit []ratekit.Limit
	}{
		{"ratekit", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}},
		{"inflight", []ratekit.Limit{ratekit.InFlight(100)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := ratekit.New(memstore.New(), bc.limit...)
			if err != nil {
				b.Fatal(err)
			}
			in := ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP())
			base, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctxs := make([]context.Context, 10_000)
			for i := range ctxs {
				addr := &net.TCPAddr{IP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)), Port: 1234}
				ctxs[i] = grpc.NewContextWithServerTransportStream(peer.NewContext(base, &peer.Peer{Addr: addr}), headerStream{})
				if _, err := in(ctxs[i], nil, info, handler); err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(7919))
				for pb.Next() {
					if _, err := in(ctxs[i%len(ctxs)], nil, info, handler); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}
