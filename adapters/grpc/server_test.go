package ratekitgrpc_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/clientip"
)

func TestUnaryAllowThenDeny(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(2, time.Minute).Named("api"))
	svc, conn := serve(t, []grpc.ServerOption{grpc.UnaryInterceptor(
		ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(), ratekitgrpc.WithHeaderClock(clk.Now)))})
	ctx := context.Background()
	for i, remaining := range []string{"1", "0"} {
		r := unary(ctx, conn)
		want := map[string]string{
			"x-ratelimit-limit": "2", "x-ratelimit-remaining": remaining, "x-ratelimit-reset": "1800000060",
			"ratelimit-policy": `"api";q=2;w=60`, "ratelimit": `"api";r=` + remaining + `;t=60`,
		}
		if r.err != nil {
			t.Fatalf("call %d: %v", i+1, r.err)
		}
		checkMD(t, "header", r.header, want)
	}
	r := unary(ctx, conn)
	st := status.Convert(r.err)
	if st.Code() != codes.ResourceExhausted || st.Message() != "Too many requests. Try again in 60 seconds." {
		t.Fatalf("third call: %v", r.err)
	}
	ri, qf, ei := details(t, r.err)
	if ri == nil || ri.RetryDelay.AsDuration() != time.Minute {
		t.Errorf("RetryInfo %v, want 60s", ri)
	}
	if qf == nil || len(qf.Violations) != 1 || qf.Violations[0].QuotaId != "api" || qf.Violations[0].QuotaValue != 2 ||
		qf.Violations[0].Description != "api: fixed 2 per 1m0s" {
		t.Errorf("QuotaFailure %v", qf)
	}
	if ei == nil || ei.Reason != "RATE_LIMITED" || ei.Domain != "ratekit" || ei.Metadata != nil {
		t.Errorf("ErrorInfo %v", ei)
	}
	checkMD(t, "trailer", r.trailer, map[string]string{
		"x-ratelimit-limit": "2", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000060",
		"ratelimit-policy": `"api";q=2;w=60`, "ratelimit": `"api";r=0;t=60`,
		"retry-after": "60", "grpc-retry-pushback-ms": "60000",
	})
	if len(r.header) != 0 {
		t.Errorf("a refusal sent headers %v: it must be trailers-only", r.header)
	}
	if n := svc.unary.Load(); n != 2 {
		t.Errorf("handler ran %d times, want 2", n)
	}
}

// checkMD requires md to hold exactly want's fields among the rate-limit
// ones (and no cache-control or content type from HTTP).
func checkMD(t *testing.T, what string, md metadata.MD, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := md.Get(k); len(got) != 1 || got[0] != v {
			t.Errorf("%s %s: %q, want %q", what, k, got, v)
		}
	}
	for k := range md {
		if _, ok := want[k]; !ok && (strings.Contains(k, "ratelimit") || k == "retry-after" || k == "cache-control" || k == "grpc-retry-pushback-ms") {
			t.Errorf("%s %s: %q, not expected", what, k, md[k])
		}
	}
}

// A stream that opens past the quota is refused before its handler runs,
// though its client has sent a message; an admitted one works throughout.
func TestStreamRefusedBeforeHandler(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(1, time.Minute).Named("streams"))
	svc, conn := serve(t, []grpc.ServerOption{grpc.StreamInterceptor(
		ratekitgrpc.StreamServerInterceptor(l, ratekitgrpc.ByIP(), ratekitgrpc.WithHeaderClock(clk.Now)))})
	ctx := context.Background()

	first, err := conn.NewStream(ctx, streamDesc, streamMethod)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"a", "b", "c"} {
		if err := first.SendMsg(wrapperspb.String(msg)); err != nil {
			t.Fatal(err)
		}
		got := new(wrapperspb.StringValue)
		if err := first.RecvMsg(got); err != nil || got.Value != msg {
			t.Fatalf("echo %q: %v %q", msg, err, got.Value)
		}
	}
	if h, err := first.Header(); err != nil || h.Get("ratelimit")[0] != `"streams";r=0;t=60` {
		t.Errorf("admitted stream's header %v %v", h, err)
	}
	if err := first.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := first.RecvMsg(new(wrapperspb.StringValue)); err != io.EOF {
		t.Fatalf("first stream ended with %v", err)
	}

	second, err := conn.NewStream(ctx, streamDesc, streamMethod)
	if err != nil {
		t.Fatal(err)
	}
	_ = second.SendMsg(wrapperspb.String("x")) // sent before the refusal arrives, or io.EOF after it
	err = second.RecvMsg(new(wrapperspb.StringValue))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("second stream: %v", err)
	}
	if ri, qf, _ := details(t, err); ri == nil || ri.RetryDelay.AsDuration() != time.Minute || qf.Violations[0].QuotaId != "streams" {
		t.Errorf("second stream: RetryInfo %v QuotaFailure %v", ri, qf)
	}
	checkMD(t, "trailer", second.Trailer(), map[string]string{
		"x-ratelimit-limit": "1", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000060",
		"ratelimit-policy": `"streams";q=1;w=60`, "ratelimit": `"streams";r=0;t=60`,
		"retry-after": "60", "grpc-retry-pushback-ms": "60000",
	})
	if n, m := svc.streams.Load(), svc.received.Load(); n != 1 || m != 3 {
		t.Errorf("handler ran %d times and received %d messages, want 1 and 3: the refused stream reached it", n, m)
	}
}

// With WithMessageCost, each received message is charged under the
// stream's key; the refused message ends the stream with ResourceExhausted.
func TestMessageCost(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(4, time.Minute).Named("msgs"))
	svc, conn := serve(t, []grpc.ServerOption{grpc.StreamInterceptor(ratekitgrpc.StreamServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithHeaderClock(clk.Now), ratekitgrpc.WithMessageCost(1)))})
	s, err := conn.NewStream(context.Background(), streamDesc, streamMethod)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // the opening took 1 of 4
		if err := s.SendMsg(wrapperspb.String("m")); err != nil {
			t.Fatal(err)
		}
		if err := s.RecvMsg(new(wrapperspb.StringValue)); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
	_ = s.SendMsg(wrapperspb.String("over"))
	err = s.RecvMsg(new(wrapperspb.StringValue))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("fourth message: %v", err)
	}
	if got := s.Trailer().Get("ratelimit"); len(got) != 1 || got[0] != `"msgs";r=0;t=60` {
		t.Errorf("trailer ratelimit %q", got)
	}
	if svc.received.Load() != 3 {
		t.Errorf("handler received %d messages, want 3", svc.received.Load())
	}
}

func TestStoreErrors(t *testing.T) {
	l, err := ratekit.New(brokenStore{}, ratekit.FixedWindow(1, time.Minute).Named("down"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy ratekit.ErrorPolicy
		code   codes.Code
		hits   int64
	}{
		{ratekit.FailOpen, codes.OK, 1},
		{ratekit.FailClosed, codes.Unavailable, 0},
	} {
		reported := make(chan error, 4)
		onErr := func(ctx context.Context, err error) {
			if m, _ := grpc.Method(ctx); m != unaryMethod {
				t.Errorf("error handler's context names method %q", m)
			}
			reported <- err
		}
		svc, conn := serve(t, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(),
			ratekitgrpc.WithErrorPolicy(tc.policy), ratekitgrpc.WithErrorHandler(onErr)))})
		r := unary(context.Background(), conn)
		st := status.Convert(r.err)
		if st.Code() != tc.code || svc.unary.Load() != tc.hits {
			t.Errorf("policy %d: %v, handler ran %d times", tc.policy, r.err, svc.unary.Load())
		}
		if strings.Contains(st.Message(), "down") || r.header.Get("ratelimit") != nil || r.trailer.Get("ratelimit") != nil {
			t.Errorf("policy %d: leaked %q %v %v", tc.policy, st.Message(), r.header, r.trailer)
		}
		if tc.code == codes.Unavailable {
			ri, qf, ei := details(t, r.err)
			if ri == nil || ri.RetryDelay.AsDuration() != time.Second || qf != nil || ei.Reason != "SERVICE_UNAVAILABLE" {
				t.Errorf("fail closed: RetryInfo %v QuotaFailure %v ErrorInfo %v", ri, qf, ei)
			}
			checkMD(t, "trailer", r.trailer, map[string]string{"retry-after": "1", "grpc-retry-pushback-ms": "1000"})
		}
		if len(reported) != 1 {
			t.Errorf("policy %d: %d errors reported", tc.policy, len(reported))
		}
	}
}

func TestKeys(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(1, time.Minute).Named("keys"))
	key := ratekitgrpc.Join(ratekitgrpc.ByMetadata("X-Api-Key"), ratekitgrpc.ByMethod())
	svc, conn := serve(t, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, key,
		ratekitgrpc.WithHeaderClock(clk.Now), ratekitgrpc.WithErrorHandler(func(context.Context, error) {})))})
	ctx := context.Background()
	for i, tc := range []struct {
		key  string
		code codes.Code
	}{{"a", codes.OK}, {"a", codes.ResourceExhausted}, {"b", codes.OK}, {"", codes.InvalidArgument}} {
		var md []string
		if tc.key != "" {
			md = []string{"x-api-key", tc.key}
		}
		r := unary(ctx, conn, md...)
		if status.Code(r.err) != tc.code {
			t.Errorf("call %d (key %q): %v, want %v", i+1, tc.key, r.err, tc.code)
		}
		if tc.code == codes.InvalidArgument {
			if st := status.Convert(r.err); st.Message() != "The request lacks what this service counts requests by." || len(r.trailer.Get("ratelimit")) != 0 {
				t.Errorf("key error: %q %v", st.Message(), r.trailer)
			}
			if _, _, ei := details(t, r.err); ei == nil || ei.Reason != "BAD_REQUEST" {
				t.Errorf("key error: ErrorInfo %v", ei)
			}
		}
	}
	if svc.unary.Load() != 2 {
		t.Errorf("handler ran %d times, want 2", svc.unary.Load())
	}
}

// ByIP reads x-forwarded-for only from a trusted peer; the test client's
// peer is 127.0.0.1.
func TestByIPTrust(t *testing.T) {
	for _, tc := range []struct {
		name   string
		key    ratekitgrpc.KeyFunc
		second codes.Code // a second call, another x-forwarded-for
	}{
		{"peer only", ratekitgrpc.ByIP(), codes.ResourceExhausted},
		{"trusted loopback", ratekitgrpc.ByIP(clientip.TrustProxies(mustPrefix("127.0.0.0/8"))), codes.OK},
	} {
		l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
		_, conn := serve(t, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, tc.key))})
		ctx := context.Background()
		if r := unary(ctx, conn, "x-forwarded-for", "203.0.113.1"); r.err != nil {
			t.Fatalf("%s: first call %v", tc.name, r.err)
		}
		if r := unary(ctx, conn, "x-forwarded-for", "203.0.113.2"); status.Code(r.err) != tc.second {
			t.Errorf("%s: second client %v, want %v", tc.name, r.err, tc.second)
		}
	}
}

// Health checks and reflection pass uncounted by default, whatever the
// quota; WithoutDefaultSkips counts them.
func TestDefaultSkips(t *testing.T) {
	for _, tc := range []struct {
		opts  []ratekitgrpc.Option
		third codes.Code
	}{{nil, codes.OK}, {[]ratekitgrpc.Option{ratekitgrpc.WithoutDefaultSkips()}, codes.ResourceExhausted}} {
		l, _ := limiter(t, ratekit.FixedWindow(2, time.Minute))
		srv := grpc.NewServer(grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(), tc.opts...)))
		healthpb.RegisterHealthServer(srv, health.NewServer())
		conn := listen(t, srv)
		hc := healthpb.NewHealthClient(conn)
		var last error
		for range 3 {
			_, last = hc.Check(context.Background(), &healthpb.HealthCheckRequest{})
		}
		if status.Code(last) != tc.third {
			t.Errorf("third health check with %d options: %v, want %v", len(tc.opts), last, tc.third)
		}
	}
}

// WithSkip and WithCostFunc read the call's context.
func TestSkipAndCost(t *testing.T) {
	l, clk := limiter(t, ratekit.FixedWindow(3, time.Minute).Named("api"))
	svc, conn := serve(t, []grpc.ServerOption{grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(),
		ratekitgrpc.WithHeaderClock(clk.Now),
		ratekitgrpc.WithSkip(func(ctx context.Context) bool {
			md, _ := metadata.FromIncomingContext(ctx)
			return len(md.Get("internal")) > 0
		}),
		ratekitgrpc.WithCostFunc(func(ctx context.Context) int64 {
			md, _ := metadata.FromIncomingContext(ctx)
			if len(md.Get("heavy")) > 0 {
				return 2
			}
			return 1
		})))})
	ctx := context.Background()
	for i, s := range []struct {
		md        []string
		code      codes.Code
		remaining string
	}{
		{[]string{"heavy", "1"}, codes.OK, "1"},
		{[]string{"internal", "1"}, codes.OK, ""},
		{[]string{"heavy", "1"}, codes.ResourceExhausted, "1"},
		{nil, codes.OK, "0"},
	} {
		r := unary(ctx, conn, s.md...)
		md := r.header
		if r.err != nil {
			md = r.trailer
		}
		if got := strings.Join(md.Get("x-ratelimit-remaining"), ","); status.Code(r.err) != s.code || got != s.remaining {
			t.Errorf("step %d: %v remaining %q, want %v %q", i+1, r.err, got, s.code, s.remaining)
		}
	}
	if svc.unary.Load() != 3 {
		t.Errorf("handler ran %d times, want 3", svc.unary.Load())
	}
}

func TestNilPanics(t *testing.T) {
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	for name, f := range map[string]func(){
		"nil key":          func() { ratekitgrpc.UnaryServerInterceptor(l, nil) },
		"nil limiter":      func() { ratekitgrpc.StreamServerInterceptor(nil, ratekitgrpc.ByIP()) },
		"negative message": func() { ratekitgrpc.StreamServerInterceptor(l, ratekitgrpc.ByIP(), ratekitgrpc.WithMessageCost(-1)) },
		"message cost in flight": func() {
			conc, _ := limiter(t, ratekit.InFlight(2))
			ratekitgrpc.StreamServerInterceptor(conc, ratekitgrpc.ByIP(), ratekitgrpc.WithMessageCost(1))
		},
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.HasPrefix(r, "ratekit: ") {
					t.Errorf("%s: recovered %q", name, r)
				}
			}()
			f()
		}()
	}
}
