package main

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/examples/grpc/echopb"
	"github.com/ratekit/ratekit/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestEcho runs the example on the in-process store and on Redis (as -redis
// gives it): 2 calls per minute per client IP, streams included; health
// checks and reflection unlimited.
func TestEcho(t *testing.T) {
	for _, where := range []string{"in-process", "redis"} {
		t.Run(where, func(t *testing.T) {
			url := ""
			if where == "redis" {
				url = "redis://" + redistest.RealStandalone(t).Addr
			}
			store, _, closeStore, err := openStore(context.Background(), url, redistest.Prefix(t))
			if err != nil {
				t.Fatal(err)
			}
			defer closeStore()
			conn := start(t, store, 2)
			checkEcho(t, conn)
		})
	}
}

// start serves the example on a loopback port and dials it.
func start(t *testing.T, store ratekit.Store, quota int64) *grpc.ClientConn {
	t.Helper()
	srv, err := newServer(store, quota, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func checkEcho(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ctx := context.Background()
	echo := echopb.NewEchoClient(conn)
	res, err := echo.UnaryEcho(ctx, &echopb.EchoRequest{Message: "hi"})
	if err != nil || res.GetMessage() != "hi" {
		t.Fatalf("first call: %v %v", res, err)
	}
	stream, err := echo.BidirectionalStreamingEcho(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a", "b", "c"} { // one stream is one charge
		if err := stream.Send(&echopb.EchoRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
		if got, err := stream.Recv(); err != nil || got.GetMessage() != m {
			t.Fatalf("stream %q: %v %v", m, got, err)
		}
	}
	_ = stream.CloseSend()
	if _, err := stream.Recv(); err != io.EOF {
		t.Fatalf("stream end: %v", err)
	}

	_, err = echo.UnaryEcho(ctx, &echopb.EchoRequest{Message: "over"})
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted || st.Message() != "Too many requests. Try again in 60 seconds." {
		t.Fatalf("third call: %v", err)
	}
	var retry time.Duration
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			retry = ri.RetryDelay.AsDuration()
		}
	}
	if retry <= 59*time.Second || retry > time.Minute {
		t.Errorf("RetryInfo %v, want about 60s", retry)
	}
	refused, err := echo.BidirectionalStreamingEcho(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refused.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("stream past the quota: %v", err)
	}

	for i := range 3 {
		if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Errorf("health check %d: %v", i+1, err)
		}
		r, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			t.Fatal(err)
		}
		res, err := r.Recv()
		if err != nil || len(res.GetListServicesResponse().GetService()) != 4 {
			t.Errorf("reflection %d: %v %v", i+1, res, err)
		}
		_ = r.CloseSend()
	}
}
