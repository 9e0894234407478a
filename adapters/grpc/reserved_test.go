package ratekitgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
)

// call makes one unary call whose request is value.
func call(ctx context.Context, conn *grpc.ClientConn, value string) reply {
	var r reply
	r.err = conn.Invoke(ctx, unaryMethod, wrapperspb.String(value), new(wrapperspb.StringValue), grpc.Header(&r.header), grpc.Trailer(&r.trailer))
	return r
}

// left returns what each limit of l has left for the test client's key
// (ByIP: 127.0.0.1), by name.
func left(t *testing.T, l *ratekit.Limiter) map[string]int64 {
	t.Helper()
	d, err := l.Peek(context.Background(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{d.Limit.Name(): d.Remaining}
	for _, s := range d.States {
		out[s.Limit.Name()] = s.Remaining
	}
	return out
}

// statusHook answers a unary call by its value: a code's name ("NotFound")
// is that status, "plain" an error that is no status, "panic" a panic,
// anything else OK.
func statusHook(_ context.Context, value string) error {
	switch value {
	case "plain":
		return errors.New("not a status")
	case "panic":
		panic("boom")
	case "NotFound":
		return status.Error(codes.NotFound, "no")
	case "Unavailable":
		return status.Error(codes.Unavailable, "later")
	case "DeadlineExceeded":
		return context.DeadlineExceeded
	}
	return nil
}

// recovered turns a handler's panic into codes.Internal, as a recovery
// interceptor chained before ratekit's does, and counts the panics.
func recovered(panics *sync.Map) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				panics.Store(fmt.Sprint(p), true)
				err = status.Error(codes.Internal, "panic")
			}
		}()
		return h(ctx, req)
	}
}

// TestCountIfStatuses: WithCountIf receives each call's code as its HTTP
// status (a plain error 500, a context error its code's, a panic 500, which
// goes on to the recovery interceptor); the statuses that do not count are
// refunded, and every InFlight slot comes back.
func TestCountIfStatuses(t *testing.T) {
	l, _ := limiter(t, ratekit.InFlight(1).Named("conc"), ratekit.FixedWindow(10, time.Minute).Named("api"))
	var mu sync.Mutex
	var seen []int
	counts := func(s int) bool {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		return s < 500
	}
	var panics sync.Map
	conn := serveEcho(t, &echoServer{unaryHook: statusHook}, []grpc.ServerOption{grpc.ChainUnaryInterceptor(recovered(&panics),
		ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(), ratekitgrpc.WithCountIf(counts)))})
	for _, c := range []struct {
		value string
		code  codes.Code
	}{
		{"ok", codes.OK}, {"NotFound", codes.NotFound}, {"Unavailable", codes.Unavailable},
		{"plain", codes.Unknown}, {"DeadlineExceeded", codes.DeadlineExceeded}, {"panic", codes.Internal}, {"ok", codes.OK},
	} {
		if r := call(context.Background(), conn, c.value); status.Code(r.err) != c.code {
			t.Fatalf("%s: %v, want %v", c.value, r.err, c.code)
		}
	}
	if want := []int{200, 404, 503, 500, 504, 500, 200}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("WithCountIf saw %v, want %v", seen, want)
	}
	if _, ok := panics.Load("boom"); !ok {
		t.Error("the panic did not reach the recovery interceptor")
	}
	if got := left(t, l); got["conc"] != 1 || got["api"] != 7 {
		t.Fatalf("left %v, want conc 1, api 7 (the two 200s and the 404 counted)", got)
	}
}

// TestCountIfConcurrent: 80 concurrent calls, half of which end with
// Unavailable, leave exactly the 40 others counted.
func TestCountIfConcurrent(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(100, time.Minute).Named("api"))
	svc := &echoServer{unaryHook: statusHook}
	conn := serveEcho(t, svc, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithCountIf(func(s int) bool { return s != 503 })))})
	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for i := range 80 {
		value, want := "ok", codes.OK
		if i%2 == 1 {
			value, want = "Unavailable", codes.Unavailable
		}
		wg.Go(func() {
			if r := call(context.Background(), conn, value); status.Code(r.err) != want {
				errs <- fmt.Errorf("%s: %v", value, r.err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := left(t, l)["api"]; got != 60 || svc.unary.Load() != 80 {
		t.Fatalf("%d left after %d calls, want 60 after 80", got, svc.unary.Load())
	}
}

// TestSettleUnary: a unary handler settles its call's real cost through
// ratekit.ReservationFrom(ctx); the estimate (WithCost 100) is what the
// headers report at admission.
func TestSettleUnary(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(1000, time.Minute).Named("tokens"))
	settle := func(ctx context.Context, value string) error {
		used, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return status.Error(codes.InvalidArgument, value)
		}
		return ratekit.ReservationFrom(ctx).Settle(ctx, used)
	}
	conn := serveEcho(t, &echoServer{unaryHook: settle}, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l,
		ratekitgrpc.ByIP(), ratekitgrpc.WithHeaderClock(clk.Now), ratekitgrpc.WithCost(100), ratekitgrpc.WithSettle()))})
	for _, s := range []struct{ used, remaining string }{{"7", "900"}, {"130", "893"}, {"0", "763"}, {"100", "763"}} {
		r := call(context.Background(), conn, s.used)
		if r.err != nil {
			t.Fatalf("used %s: %v", s.used, r.err)
		}
		if got := r.header.Get("x-ratelimit-remaining"); len(got) != 1 || got[0] != s.remaining {
			t.Errorf("used %s: x-ratelimit-remaining %q, want %s", s.used, got, s.remaining)
		}
	}
	if got := left(t, l)["tokens"]; got != 1000-237 {
		t.Fatalf("%d left, want %d", got, 1000-237)
	}
}

// TestMessageCostPlain: per-message charges are plain: WithCountIf refunds
// a stream's opening charge, never its messages'.
func TestMessageCostPlain(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(10, time.Minute).Named("msgs"))
	_, conn := serve(t, []grpc.ServerOption{grpc.StreamInterceptor(ratekitgrpc.StreamServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithMessageCost(1), ratekitgrpc.WithCountIf(func(int) bool { return false })))})
	s, err := conn.NewStream(context.Background(), streamDesc, streamMethod)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.SendMsg(wrapperspb.String("m")); err != nil {
			t.Fatal(err)
		}
		if err := s.RecvMsg(new(wrapperspb.StringValue)); err != nil {
			t.Fatal(err)
		}
	}
	if got := left(t, l)["msgs"]; got != 6 {
		t.Fatalf("%d left while the stream is open, want 6 (its opening and 3 messages)", got)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := s.RecvMsg(new(wrapperspb.StringValue)); err != io.EOF {
		t.Fatalf("stream ended with %v", err)
	}
	if got := left(t, l)["msgs"]; got != 7 {
		t.Fatalf("%d left once the stream ended, want 7 (the opening refunded, the messages kept)", got)
	}
}

func TestHTTPStatus(t *testing.T) {
	for c, want := range map[codes.Code]int{
		codes.OK: 200, codes.Canceled: 499, codes.Unknown: 500, codes.InvalidArgument: 400, codes.DeadlineExceeded: 504,
		codes.NotFound: 404, codes.AlreadyExists: 409, codes.PermissionDenied: 403, codes.ResourceExhausted: 429,
		codes.FailedPrecondition: 400, codes.Aborted: 409, codes.OutOfRange: 400, codes.Unimplemented: 501,
		codes.Internal: 500, codes.Unavailable: 503, codes.DataLoss: 500, codes.Unauthenticated: 401, codes.Code(17): 500,
	} {
		if got := ratekitgrpc.HTTPStatus(c); got != want {
			t.Errorf("HTTPStatus(%v) = %d, want %d", c, got, want)
		}
	}
}
