package ratekitgrpc_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// denials counts the refusals the server decided.
type denials struct{ n atomic.Int64 }

func (d *denials) Observe(_ context.Context, e observe.Event) {
	if e.Outcome == observe.Denied {
		d.n.Add(1)
	}
}

// realLimiter is a Limiter over a memstore on the wall clock, for clients
// that wait.
func realLimiter(t *testing.T, limits ...ratekit.Limit) *ratekit.Limiter {
	t.Helper()
	l, err := ratekit.New(memstore.New(), limits...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A client with the interceptor reaches every call under a quota: each
// refusal makes it wait the advised time once, the call sent again passes,
// and the calls after it are not refused: the server refuses no call twice.
func TestClientHonoursRetryInfo(t *testing.T) {
	l := realLimiter(t, ratekit.FixedWindow(4, 300*time.Millisecond).Named("api"))
	var refused denials
	svc, conn := serve(t, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithObserver(&refused)))},
		grpc.WithUnaryInterceptor(ratekitgrpc.UnaryClientInterceptor()))
	const calls = 12
	start := time.Now()
	for i := range calls {
		before := refused.n.Load()
		if r := unary(context.Background(), conn); r.err != nil {
			t.Fatalf("call %d: %v", i+1, r.err)
		}
		if d := refused.n.Load() - before; d > 1 {
			t.Fatalf("call %d was refused %d times: the retry came before the advised time", i+1, d)
		}
	}
	elapsed := time.Since(start)
	if svc.unary.Load() != calls {
		t.Errorf("handler ran %d times, want %d", svc.unary.Load(), calls)
	}
	// 12 calls at 4 per window need at least 3 windows: at least 2 waits,
	// each the rest of a window.
	if n := refused.n.Load(); n < 2 || elapsed < time.Duration(n-1)*300*time.Millisecond {
		t.Errorf("%d refusals in %v", n, elapsed)
	}
	t.Logf("%d calls, %d refusals, %v", calls, refused.n.Load(), elapsed)
}

// Without the interceptor the same client sees the refusals.
func TestClientWithoutInterceptorIsRefused(t *testing.T) {
	l := realLimiter(t, ratekit.FixedWindow(2, time.Minute).Named("api"))
	_, conn := serve(t, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP()))})
	var codesSeen []codes.Code
	for range 3 {
		codesSeen = append(codesSeen, status.Code(unary(context.Background(), conn).err))
	}
	if codesSeen[2] != codes.ResourceExhausted {
		t.Errorf("codes %v", codesSeen)
	}
}

// A refusal whose advised time lies past the call's deadline (or past
// WithMaxWait) is returned at once; later calls of the method are refused
// in the client until then, never sent.
func TestClientBoundedByDeadline(t *testing.T) {
	l := realLimiter(t, ratekit.FixedWindow(1, time.Minute).Named("api"))
	var refused denials
	svc, conn := serve(t, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithObserver(&refused)))},
		grpc.WithUnaryInterceptor(ratekitgrpc.UnaryClientInterceptor(ratekitgrpc.WithMaxWait(time.Hour))))
	if r := unary(context.Background(), conn); r.err != nil {
		t.Fatal(r.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	r := unary(ctx, conn)
	if status.Code(r.err) != codes.ResourceExhausted || time.Since(start) > time.Second {
		t.Fatalf("second call: %v after %v, want the refusal at once", r.err, time.Since(start))
	}
	if ri, _, _ := details(t, r.err); ri == nil || ri.RetryDelay.AsDuration() <= 59*time.Second {
		t.Errorf("second call's RetryInfo %v", ri)
	}
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r := unary(ctx, conn)
		cancel()
		ri, _, _ := details(t, r.err)
		if status.Code(r.err) != codes.ResourceExhausted || ri == nil || ri.RetryDelay.AsDuration() <= 58*time.Second {
			t.Errorf("held call: %v %v", r.err, ri)
		}
	}
	if refused.n.Load() != 1 || svc.unary.Load() != 1 {
		t.Errorf("server refused %d calls and ran %d, want 1 and 1: held calls were sent", refused.n.Load(), svc.unary.Load())
	}
}

// Streams of a refused method wait until the advised time before they open.
func TestStreamClientWaits(t *testing.T) {
	l := realLimiter(t, ratekit.FixedWindow(1, 400*time.Millisecond).Named("streams"))
	var refused denials
	svc, conn := serve(t, []grpc.ServerOption{grpc.StreamInterceptor(ratekitgrpc.StreamServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithObserver(&refused)))},
		grpc.WithStreamInterceptor(ratekitgrpc.StreamClientInterceptor()))
	open := func() error {
		s, err := conn.NewStream(context.Background(), streamDesc, streamMethod)
		if err != nil {
			return err
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		err = s.RecvMsg(new(wrapperspb.StringValue))
		if err == io.EOF {
			return nil
		}
		return err
	}
	if err := open(); err != nil {
		t.Fatal(err)
	}
	if err := open(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("second stream: %v", err)
	}
	start := time.Now()
	if err := open(); err != nil {
		t.Fatalf("third stream: %v", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("third stream opened after %v: it did not wait", waited)
	}
	if refused.n.Load() != 1 || svc.streams.Load() != 2 {
		t.Errorf("server refused %d streams and ran %d, want 1 and 2", refused.n.Load(), svc.streams.Load())
	}
}

// gRPC's own retry policy replays a refused stream after the pushback the
// server sends, so the stream reaches the handler with its messages.
func TestRetryPolicyReplaysStream(t *testing.T) {
	l := realLimiter(t, ratekit.FixedWindow(1, 300*time.Millisecond).Named("streams"))
	var refused denials
	svc, conn := serve(t, []grpc.ServerOption{grpc.StreamInterceptor(ratekitgrpc.StreamServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithObserver(&refused)))},
		grpc.WithDefaultServiceConfig(`{"methodConfig":[{"name":[{"service":"test.Echo"}],"retryPolicy":{
			"maxAttempts":3,"initialBackoff":"0.01s","maxBackoff":"0.01s","backoffMultiplier":1,
			"retryableStatusCodes":["RESOURCE_EXHAUSTED"]}}]}`))
	for i := range 2 {
		s, err := conn.NewStream(context.Background(), streamDesc, streamMethod)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SendMsg(wrapperspb.String("m")); err != nil {
			t.Fatal(err)
		}
		got := new(wrapperspb.StringValue)
		if err := s.RecvMsg(got); err != nil || got.Value != "m" {
			t.Fatalf("stream %d: %v %q", i+1, err, got.Value)
		}
		_ = s.CloseSend()
	}
	if svc.streams.Load() != 2 || svc.received.Load() != 2 || refused.n.Load() != 1 {
		t.Errorf("handler ran %d times and received %d messages after %d refusals, want 2, 2 and 1",
			svc.streams.Load(), svc.received.Load(), refused.n.Load())
	}
}

// deniedSignal sends on its channel (without blocking) when the server
// refuses a call.
type deniedSignal chan struct{}

func (s deniedSignal) Observe(_ context.Context, e observe.Event) {
	if e.Outcome == observe.Denied {
		select {
		case s <- struct{}{}:
		default:
		}
	}
}

// An in-flight refusal holds back no call: once InFlight(1) refused a call,
// the method's next calls are sent at once, even by a client that waits
// for nothing, which a rate refusal's hold would refuse unsent.
func TestClientInFlightRefusalHoldsNoCall(t *testing.T) {
	l, _ := limiter(t, ratekit.InFlight(1).Named("conc"))
	h := newHolder()
	svc := &echoServer{unaryHook: h.hook}
	var refused denials
	conn := serveEcho(t, svc, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithObserver(&refused)))},
		grpc.WithUnaryInterceptor(ratekitgrpc.UnaryClientInterceptor(ratekitgrpc.WithMaxWait(0))))
	ctx := context.Background()
	first := h.hold(t, conn, 1)
	if r := call(ctx, conn, "x"); status.Code(r.err) != codes.ResourceExhausted {
		t.Fatalf("call while the slot is held: %v", r.err)
	}
	close(h.release[1])
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	for i := range 3 {
		if r := call(ctx, conn, "x"); r.err != nil {
			t.Fatalf("call %d after the refusal: %v", i+1, r.err)
		}
	}
	if refused.n.Load() != 1 || svc.unary.Load() != 4 {
		t.Errorf("server refused %d calls and ran %d, want 1 and 4", refused.n.Load(), svc.unary.Load())
	}
}

// The call an in-flight limit refused is still sent again, once its
// advised time (1 s) has passed, and then passes.
func TestClientRetriesInFlightRefusal(t *testing.T) {
	l, _ := limiter(t, ratekit.InFlight(1).Named("conc"))
	h := newHolder()
	svc := &echoServer{unaryHook: h.hook}
	var refused denials
	signal := make(deniedSignal, 1)
	conn := serveEcho(t, svc, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithObserver(&refused, signal)))},
		grpc.WithUnaryInterceptor(ratekitgrpc.UnaryClientInterceptor()))
	first := h.hold(t, conn, 1)
	retried := make(chan reply, 1)
	sent := time.Now()
	go func() { retried <- call(context.Background(), conn, "x") }()
	<-signal // refused while the slot is held
	close(h.release[1])
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	if r := <-retried; r.err != nil {
		t.Fatalf("refused call: %v", r.err)
	}
	if waited := time.Since(sent); waited < time.Second {
		t.Errorf("refused call passed after %v: it was sent again before its advised time", waited)
	}
	if refused.n.Load() != 1 || svc.unary.Load() != 2 {
		t.Errorf("server refused %d calls and ran %d, want 1 and 2", refused.n.Load(), svc.unary.Load())
	}
}
