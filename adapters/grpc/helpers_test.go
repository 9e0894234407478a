package ratekitgrpc_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// start is the fake clock's origin: x-ratelimit-reset values are exact.
var start = time.Unix(1_800_000_000, 0)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// limiter returns a Limiter over a memstore on a fake clock.
func limiter(t testing.TB, limits ...ratekit.Limit) (*ratekit.Limiter, *clock) {
	t.Helper()
	clk := &clock{now: start}
	l, err := ratekit.New(memstore.New(memstore.WithClock(clk.Now)), limits...)
	if err != nil {
		t.Fatal(err)
	}
	return l, clk
}

// brokenStore fails every call, as a Redis that is down would.
type brokenStore struct{}

var errDown = errors.New("ratekit: test store is down")

func (s brokenStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (brokenStore) Take(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (brokenStore) Peek(context.Context, string, []ratekit.Limit) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (brokenStore) Reset(context.Context, string, []ratekit.Limit) error { return errDown }

// The test service, test.Echo: Unary echoes a StringValue; Stream echoes
// every message it receives until the client closes. Its handlers count
// their runs, and call the hooks a test sets before they answer.
const (
	unaryMethod  = "/test.Echo/Unary"
	streamMethod = "/test.Echo/Stream"
)

type echoServer struct {
	unary, streams atomic.Int64
	received       atomic.Int64

	// unaryHook, when set, runs in Unary with the request's value; its
	// error is the call's.
	unaryHook func(ctx context.Context, value string) error
	// streamHook, when set, runs when Stream starts; its error ends the
	// stream.
	streamHook func(ss grpc.ServerStream) error
}

var echoDesc = grpc.ServiceDesc{
	ServiceName: "test.Echo",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Unary", Handler: func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
		req := new(wrapperspb.StringValue)
		if err := dec(req); err != nil {
			return nil, err
		}
		h := func(ctx context.Context, req any) (any, error) {
			e := srv.(*echoServer)
			e.unary.Add(1)
			if e.unaryHook != nil {
				if err := e.unaryHook(ctx, req.(*wrapperspb.StringValue).Value); err != nil {
					return nil, err
				}
			}
			return req, nil
		}
		if in == nil {
			return h(ctx, req)
		}
		return in(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: unaryMethod}, h)
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "Stream", ServerStreams: true, ClientStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
		e := srv.(*echoServer)
		e.streams.Add(1)
		if e.streamHook != nil {
			if err := e.streamHook(ss); err != nil {
				return err
			}
		}
		for {
			m := new(wrapperspb.StringValue)
			if err := ss.RecvMsg(m); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
			e.received.Add(1)
			if err := ss.SendMsg(m); err != nil {
				return err
			}
		}
	}}},
}

var streamDesc = &grpc.StreamDesc{StreamName: "Stream", ServerStreams: true, ClientStreams: true}

// serve starts a gRPC server with opts and the test service on a loopback
// port, and returns the service and a client connection to it.
func serve(t testing.TB, opts []grpc.ServerOption, dial ...grpc.DialOption) (*echoServer, *grpc.ClientConn) {
	t.Helper()
	e := &echoServer{}
	return e, serveEcho(t, e, opts, dial...)
}

// serveEcho serves e, whose hooks the caller has set, as serve does.
func serveEcho(t testing.TB, e *echoServer, opts []grpc.ServerOption, dial ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&echoDesc, e)
	return listen(t, srv, dial...)
}

// listen serves srv on a loopback port and dials it.
func listen(t testing.TB, srv *grpc.Server, dial ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dial...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// reply is what a client sees of one unary call.
type reply struct {
	err             error
	header, trailer metadata.MD
}

// unary makes one unary call with metadata pairs md.
func unary(ctx context.Context, conn *grpc.ClientConn, md ...string) reply {
	var r reply
	if len(md) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, md...)
	}
	r.err = conn.Invoke(ctx, unaryMethod, wrapperspb.String("hi"), new(wrapperspb.StringValue), grpc.Header(&r.header), grpc.Trailer(&r.trailer))
	return r
}

// details returns the RetryInfo, QuotaFailure and ErrorInfo of err's status.
func details(t testing.TB, err error) (*errdetails.RetryInfo, *errdetails.QuotaFailure, *errdetails.ErrorInfo) {
	t.Helper()
	var ri *errdetails.RetryInfo
	var qf *errdetails.QuotaFailure
	var ei *errdetails.ErrorInfo
	for _, d := range status.Convert(err).Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			ri = d
		case *errdetails.QuotaFailure:
			qf = d
		case *errdetails.ErrorInfo:
			ei = d
		default:
			t.Errorf("unexpected detail %T %v", d, d)
		}
	}
	return ri, qf, ei
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
