package ratekitgrpc_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/store/memstore"
)

// waitFree waits (2 s at most) until l's InFlight limit "conc" has want
// slots free.
func waitFree(t *testing.T, l *ratekit.Limiter, want int64) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); left(t, l)["conc"] != want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d slots free after 2 s, want %d", left(t, l)["conc"], want)
		}
	}
}

// holder holds unary handlers whose request is "hold <i>": each sends i on
// entered and waits until release[i] is closed.
type holder struct {
	entered chan int
	release [3]chan struct{}
}

func newHolder() *holder {
	h := &holder{entered: make(chan int, 3)}
	for i := range h.release {
		h.release[i] = make(chan struct{})
	}
	return h
}

func (h *holder) hook(ctx context.Context, value string) error {
	if ratekit.ReservationFrom(ctx) == nil {
		return status.Error(codes.Internal, "the handler's context lacks the Reservation")
	}
	if i, ok := strings.CutPrefix(value, "hold "); ok {
		n, _ := strconv.Atoi(i)
		h.entered <- n
		<-h.release[n]
	}
	return nil
}

// hold sends "hold <i>" and returns once its handler runs; the reply comes
// on the channel once release[i] is closed.
func (h *holder) hold(t *testing.T, conn *grpc.ClientConn, i int) chan reply {
	t.Helper()
	out := make(chan reply, 1)
	go func() { out <- call(context.Background(), conn, "hold "+strconv.Itoa(i)) }()
	select {
	case got := <-h.entered:
		if got != i {
			t.Fatalf("handler %d entered, want %d", got, i)
		}
	case r := <-out:
		t.Fatalf("call %d ended before its handler held it: %v", i, r.err)
	}
	return out
}

// TestInFlightUnary: two calls held open take both slots of InFlight(2);
// the third is refused with RetryInfo 1 s and the concurrent-requests
// policy; a slot is back as soon as a handler returns.
func TestInFlightUnary(t *testing.T) {
	l, clk := limiter(t, ratekit.InFlight(2).Named("conc"))
	h := newHolder()
	conn := serveEcho(t, &echoServer{unaryHook: h.hook}, []grpc.ServerOption{grpc.UnaryInterceptor(
		ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(), ratekitgrpc.WithHeaderClock(clk.Now)))})
	const policy = `"conc";q=2;qu="concurrent-requests"`
	admitted := func(r reply, free string) {
		t.Helper()
		if r.err != nil {
			t.Fatal(r.err)
		}
		checkMD(t, "header", r.header, map[string]string{"ratelimit-policy": policy, "ratelimit": `"conc";r=` + free,
			"x-ratelimit-limit": "2", "x-ratelimit-remaining": free, "x-ratelimit-reset": "1800000000"})
	}
	first, second := h.hold(t, conn, 1), h.hold(t, conn, 2)
	r := call(context.Background(), conn, "x")
	if st := status.Convert(r.err); st.Code() != codes.ResourceExhausted || st.Message() != "Too many requests. Try again in 1 second." {
		t.Fatalf("third call: %v", r.err)
	}
	ri, qf, ei := details(t, r.err)
	if ri == nil || ri.RetryDelay.AsDuration() != time.Second || qf == nil || qf.Violations[0].QuotaId != "conc" || qf.Violations[0].QuotaValue != 2 {
		t.Errorf("third call: RetryInfo %v QuotaFailure %v", ri, qf)
	}
	if ei == nil || ei.Reason != "RATE_LIMITED" || len(ei.Metadata) != 1 || ei.Metadata["quota_unit"] != "concurrent-requests" {
		t.Errorf("third call: ErrorInfo %v, want quota_unit concurrent-requests", ei)
	}
	checkMD(t, "trailer", r.trailer, map[string]string{"ratelimit-policy": policy, "ratelimit": `"conc";r=0`,
		"x-ratelimit-limit": "2", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000000",
		"retry-after": "1", "grpc-retry-pushback-ms": "1000"})
	close(h.release[1])
	admitted(<-first, "1")
	admitted(call(context.Background(), conn, "x"), "0") // the first call's slot
	close(h.release[2])
	admitted(<-second, "0")
	admitted(call(context.Background(), conn, "x"), "1")
	if got := left(t, l)["conc"]; got != 2 {
		t.Fatalf("%d slots free once every call returned, want 2", got)
	}
}

// TestInFlightWithRateRefusal: a refusal a rate limit took part in is no
// in-flight refusal, even when the InFlight limit binds (its 1 s is the
// longer wait): its ErrorInfo has no quota_unit. The slot and the window's
// one request are taken by another instance, so that the store decides
// (this instance, holding the slot itself, would refuse on its own, by the
// InFlight limit alone: TestInFlightLocalRefusal).
func TestInFlightWithRateRefusal(t *testing.T) {
	limits := []ratekit.Limit{ratekit.InFlight(1).Named("conc"), ratekit.FixedWindow(1, 500*time.Millisecond).Named("api")}
	mem := memstore.New(memstore.WithClock((&clock{now: start}).Now))
	l, err := ratekit.New(mem, limits...)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ratekit.New(mem, limits...)
	if err != nil {
		t.Fatal(err)
	}
	held, err := other.Reserve(context.Background(), "127.0.0.1", 1)
	if err != nil || !held.Decision.Allowed {
		t.Fatalf("the other instance: %+v, %v", held.Decision, err)
	}
	defer held.Release(context.Background())
	conn := serveEcho(t, &echoServer{}, []grpc.ServerOption{grpc.UnaryInterceptor(
		ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP()))})
	r := call(context.Background(), conn, "x")
	ri, qf, ei := details(t, r.err)
	if status.Code(r.err) != codes.ResourceExhausted || ri == nil || ri.RetryDelay.AsDuration() != time.Second ||
		qf == nil || len(qf.Violations) != 2 || qf.Violations[0].QuotaId != "conc" {
		t.Fatalf("a call: %v, RetryInfo %v QuotaFailure %v", r.err, ri, qf)
	}
	if ei == nil || ei.Metadata != nil {
		t.Errorf("a call: ErrorInfo %v, want no metadata", ei)
	}
}

// TestInFlightLocalRefusal: a call refused by this instance, which holds
// every slot of its subject, gets the in-flight refusal the store gives,
// beside a rate limit too: the instance answers by the InFlight limit,
// whose state alone it knows.
func TestInFlightLocalRefusal(t *testing.T) {
	l, clk := limiter(t, ratekit.InFlight(1).Named("conc"), ratekit.FixedWindow(100, time.Minute).Named("api"))
	h := newHolder()
	conn := serveEcho(t, &echoServer{unaryHook: h.hook}, []grpc.ServerOption{grpc.UnaryInterceptor(
		ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(), ratekitgrpc.WithHeaderClock(clk.Now)))})
	first := h.hold(t, conn, 1)
	r := call(context.Background(), conn, "x")
	ri, qf, ei := details(t, r.err)
	if status.Code(r.err) != codes.ResourceExhausted || ri == nil || ri.RetryDelay.AsDuration() != time.Second ||
		qf == nil || len(qf.Violations) != 1 || qf.Violations[0].QuotaId != "conc" || qf.Violations[0].QuotaValue != 1 {
		t.Fatalf("second call: %v, RetryInfo %v QuotaFailure %v", r.err, ri, qf)
	}
	if ei == nil || ei.Reason != "RATE_LIMITED" || ei.Metadata["quota_unit"] != "concurrent-requests" {
		t.Errorf("second call: ErrorInfo %v, want quota_unit concurrent-requests", ei)
	}
	checkMD(t, "trailer", r.trailer, map[string]string{"ratelimit-policy": `"conc";q=1;qu="concurrent-requests", "api";q=100;w=60`,
		"ratelimit": `"conc";r=0`, "x-ratelimit-limit": "1", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000000",
		"retry-after": "1", "grpc-retry-pushback-ms": "1000"})
	close(h.release[1])
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
}

// TestInFlightStream: a stream holds its slot for its whole life, and its
// handler finds the Reservation in ss.Context(); a client that cancels a
// stream leaves the slot taken until its handler returns.
func TestInFlightStream(t *testing.T) {
	l, clk := limiter(t, ratekit.InFlight(1).Named("conc"))
	entered, gone, release := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	e := &echoServer{}
	var mu sync.Mutex
	holdNext := false
	e.streamHook = func(ss grpc.ServerStream) error {
		if ratekit.ReservationFrom(ss.Context()) == nil {
			return status.Error(codes.Internal, "the stream's context lacks the Reservation")
		}
		mu.Lock()
		hold := holdNext
		mu.Unlock()
		if hold { // sees its context end, and works on
			entered <- struct{}{}
			<-ss.Context().Done()
			gone <- struct{}{}
			<-release
		}
		return nil
	}
	conn := serveEcho(t, e, []grpc.ServerOption{grpc.StreamInterceptor(
		ratekitgrpc.StreamServerInterceptor(l, ratekitgrpc.ByIP(), ratekitgrpc.WithHeaderClock(clk.Now)))})
	ctx := context.Background()

	open := func(ctx context.Context) grpc.ClientStream {
		t.Helper()
		s, err := conn.NewStream(ctx, streamDesc, streamMethod)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	echo := func(s grpc.ClientStream, msg string) error {
		// io.EOF from SendMsg: the server ended the stream first (a refusal
		// at its start); RecvMsg gives its status.
		if err := s.SendMsg(wrapperspb.String(msg)); err != nil && err != io.EOF {
			return err
		}
		return s.RecvMsg(new(wrapperspb.StringValue))
	}
	first := open(ctx)
	for i := range 3 {
		if err := echo(first, "m"); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
	if got := left(t, l)["conc"]; got != 0 {
		t.Fatalf("%d slots free while a stream is open, want 0", got)
	}
	second := open(ctx)
	if err := echo(second, "m"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("second stream: %v", err)
	}
	if got := second.Trailer().Get("ratelimit"); len(got) != 1 || got[0] != `"conc";r=0` {
		t.Errorf("second stream's trailer ratelimit %q", got)
	}
	if err := echo(first, "still open"); err != nil {
		t.Fatalf("first stream after the refusal: %v", err)
	}
	if err := first.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := first.RecvMsg(new(wrapperspb.StringValue)); err != io.EOF {
		t.Fatalf("first stream ended with %v", err)
	}
	if got := left(t, l)["conc"]; got != 1 {
		t.Fatalf("%d slots free once the stream ended, want 1", got)
	}

	mu.Lock()
	holdNext = true
	mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	third := open(cctx)
	<-entered
	if got := left(t, l)["conc"]; got != 0 {
		t.Fatalf("%d slots free while the third stream is held, want 0", got)
	}
	cancel()
	if err := third.RecvMsg(new(wrapperspb.StringValue)); status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled stream: %v", err)
	}
	<-gone // the handler saw the cancellation and still holds the stream, and its slot
	if got := left(t, l)["conc"]; got != 0 {
		close(release)
		t.Fatalf("%d slots free while the cancelled stream's handler runs, want 0", got)
	}
	close(release)
	waitFree(t, l, 1)
	if n := e.streams.Load(); n != 2 {
		t.Errorf("handler ran %d times, want 2", n)
	}
}

// downSettler fails every call, as brokenStore does, and can hold slots,
// so that a Limiter with an InFlight limit can be built on it.
type downSettler struct{ brokenStore }

func (s downSettler) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (downSettler) Reserve(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (downSettler) Settle(context.Context, string, []ratekit.Limit, *ratekit.Receipt, int64) error {
	return errDown
}
func (downSettler) Renew(context.Context, string, []ratekit.Limit, *ratekit.Receipt) (bool, error) {
	return false, errDown
}

// TestInFlightFailOpen: while the store fails, a unary call or a stream of
// an InFlight(1) limit fails open holding its place on the instance until
// its handler returns: a second one meanwhile is refused (ResourceExhausted,
// RetryInfo 1 s) without a store call, and one after it passes.
func TestInFlightFailOpen(t *testing.T) {
	l, err := ratekit.New(downSettler{}, ratekit.InFlight(1).Named("conc"))
	if err != nil {
		t.Fatal(err)
	}
	var reported atomic.Int64
	report := ratekitgrpc.WithErrorHandler(func(_ context.Context, err error) {
		if errors.Is(err, errDown) {
			reported.Add(1)
		}
	})
	h := newHolder()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	e := &echoServer{unaryHook: h.hook, streamHook: func(ss grpc.ServerStream) error {
		if ratekit.ReservationFrom(ss.Context()) == nil {
			return status.Error(codes.Internal, "the stream's context lacks the Reservation")
		}
		entered <- struct{}{}
		<-release
		return nil
	}}
	conn := serveEcho(t, e, []grpc.ServerOption{
		grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(), report)),
		grpc.StreamInterceptor(ratekitgrpc.StreamServerInterceptor(l, ratekitgrpc.ByIP(), report))})
	var unaryOnce, streamOnce sync.Once
	freeUnary := func() { unaryOnce.Do(func() { close(h.release[1]) }) }
	freeStream := func() { streamOnce.Do(func() { close(release) }) }
	t.Cleanup(func() { freeUnary(); freeStream() }) // before the server stops, which waits for its handlers
	refused := func(what string, err error) {
		t.Helper()
		ri, _, _ := details(t, err)
		if status.Code(err) != codes.ResourceExhausted || ri == nil || ri.RetryDelay.AsDuration() != time.Second {
			t.Fatalf("%s: %v, RetryInfo %v; want ResourceExhausted, 1 s", what, err, ri)
		}
	}

	first := h.hold(t, conn, 1)
	refused("a unary call while one is held", call(context.Background(), conn, "x").err)
	freeUnary()
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	if r := call(context.Background(), conn, "x"); r.err != nil {
		t.Fatalf("a unary call once the held one returned: %v", r.err)
	}

	ctx := context.Background()
	s1, err := conn.NewStream(ctx, streamDesc, streamMethod)
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	s2, err := conn.NewStream(ctx, streamDesc, streamMethod)
	if err != nil {
		t.Fatal(err)
	}
	refused("a stream while one is held", s2.RecvMsg(new(wrapperspb.StringValue)))
	freeStream()
	if err := s1.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := s1.RecvMsg(new(wrapperspb.StringValue)); err != io.EOF {
		t.Fatalf("the held stream: %v", err)
	}
	if n := reported.Load(); n != 3 { // the held call, the call after it, the held stream
		t.Fatalf("%d store errors reported, want 3 (none for a refusal)", n)
	}
}
