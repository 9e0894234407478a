package paritytest

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/response"
	"github.com/ratekit/ratekit/store/memstore"
)

// answer is what a client learns of one call, in terms both transports
// share: the outcome (as a gRPC code), the rate-limit fields and
// retry-after (header names in lower case), the violated policies, and, on
// gRPC, RetryInfo's exact delay.
type answer struct {
	code     codes.Code
	fields   map[string]string
	violated []string
	retry    time.Duration // gRPC only
}

// rateFields are the fields compared: every rate-limit header and
// Retry-After.
var rateFields = []string{"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit-policy", "ratelimit", "retry-after"}

type grpcStep struct {
	advance time.Duration
	group   string // api, closed, keyed
	cost    int64  // api: the call's cost
	noKey   bool   // keyed: leave the key out
	code    codes.Code
	retry   time.Duration // RetryInfo's exact delay; 0: none
}

// Two limits at once on /api: a minute window and a burst of 2 refilled at
// 1 per second; each step's exact RetryInfo is what the fake clock makes it.
var grpcScript = []grpcStep{
	{group: "api", cost: 1, code: codes.OK},
	{group: "api", cost: 1, code: codes.OK},
	{group: "api", cost: 1, code: codes.ResourceExhausted, retry: time.Second}, // the burst is spent
	{advance: 1500 * time.Millisecond, group: "api", cost: 1, code: codes.OK},  // 1 of the burst back, 0.5 s into the next
	{advance: 2 * time.Second, group: "api", cost: 1, code: codes.ResourceExhausted, retry: 56500 * time.Millisecond},
	{group: "api", cost: 5, code: codes.ResourceExhausted}, // more than either limit holds: never
	{advance: 57 * time.Second, group: "api", cost: 2, code: codes.OK},
	{group: "closed", code: codes.Unavailable, retry: time.Second},
	{group: "keyed", code: codes.OK},
	{group: "keyed", noKey: true, code: codes.InvalidArgument},
}

// TestGRPCParity sends the same calls as requests through net/http
// (ratekit.Middleware) and as calls through a real gRPC server and client
// (ratekitgrpc), each transport on its own memstore and fake clock: the
// decisions, the rate-limit fields, Retry-After and the violated policies
// are the same, and RetryInfo is the exact time whose whole seconds,
// rounded up, are the Retry-After.
func TestGRPCParity(t *testing.T) {
	httpDo, httpClock := httpParityApp(t)
	grpcDo, grpcClock := grpcParityApp(t)
	for i, s := range grpcScript {
		httpClock.Advance(s.advance)
		grpcClock.Advance(s.advance)
		h, g := httpDo(t, s), grpcDo(t, s)
		if h.code != s.code || g.code != s.code {
			t.Errorf("step %d: net/http %v, gRPC %v, want %v", i+1, h.code, g.code, s.code)
		}
		if !equalFields(h.fields, g.fields) || !slices.Equal(h.violated, g.violated) {
			t.Errorf("step %d differs:\n  net/http %v %q\n  gRPC     %v %q", i+1, h.fields, h.violated, g.fields, g.violated)
		}
		if s.group == "api" && (g.fields["ratelimit"] == "" || s.code == codes.ResourceExhausted && len(g.violated) == 0) {
			t.Errorf("step %d: gRPC sent no rate-limit fields or no violated policy: %v %q", i+1, g.fields, g.violated)
		}
		if g.retry != s.retry {
			t.Errorf("step %d: RetryInfo %v, want %v", i+1, g.retry, s.retry)
		}
		if s.retry > 0 && h.fields["retry-after"] != strconv.Itoa(int(math.Ceil(s.retry.Seconds()))) {
			t.Errorf("step %d: Retry-After %q is not RetryInfo %v rounded up", i+1, h.fields["retry-after"], s.retry)
		}
	}
}

func equalFields(a, b map[string]string) bool {
	for _, k := range rateFields {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// parityLimiters are the Limiters of the groups, over store.
func parityLimiters(t *testing.T, store ratekit.Store) (api, broken, keyed *ratekit.Limiter) {
	t.Helper()
	must := func(l *ratekit.Limiter, err error) *ratekit.Limiter {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	api = must(ratekit.New(store, ratekit.FixedWindow(3, time.Minute).Named("minute"), ratekit.GCRA(1, time.Second, 2).Named("burst")))
	broken = must(ratekit.New(brokenStore{}, ratekit.FixedWindow(3, time.Minute).Named("api")))
	keyed = must(ratekit.New(store, ratekit.FixedWindow(5, time.Minute).Named("keyed")))
	return api, broken, keyed
}

func httpParityApp(t *testing.T) (func(*testing.T, grpcStep) answer, *clock) {
	clk := &clock{now: start}
	api, broken, keyed := parityLimiters(t, memstore.New(memstore.WithClock(clk.Now)))
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	quiet := ratekit.WithErrorHandler(func(*http.Request, error) {})
	opts := []ratekit.Option{ratekit.WithHeaderClock(clk.Now), ratekit.WithRenderer(response.Problem), quiet}
	cost := ratekit.WithCostFunc(func(r *http.Request) int64 { n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64); return n })
	mux := http.NewServeMux()
	mux.Handle("/api", ratekit.Middleware(api, ratekit.ByIP(), append(opts, cost)...)(ok))
	mux.Handle("/closed", ratekit.Middleware(broken, ratekit.ByIP(), append(opts, ratekit.WithErrorPolicy(ratekit.FailClosed))...)(ok))
	mux.Handle("/keyed", ratekit.Middleware(keyed, ratekit.ByHeader("X-Api-Key"), opts...)(ok))
	return func(t *testing.T, s grpcStep) answer {
		req := httptest.NewRequest(http.MethodGet, "/"+s.group, nil)
		req.RemoteAddr = "127.0.0.1:4321"
		req.Header.Set("X-Cost", strconv.FormatInt(s.cost, 10))
		if !s.noKey {
			req.Header.Set("X-Api-Key", "k")
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		a := answer{code: map[int]codes.Code{200: codes.OK, 429: codes.ResourceExhausted, 503: codes.Unavailable, 400: codes.InvalidArgument}[rec.Code],
			fields: map[string]string{}}
		for _, k := range rateFields {
			if v := rec.Header().Get(k); v != "" {
				a.fields[k] = v
			}
		}
		if rec.Code == http.StatusTooManyRequests {
			var body struct {
				Violated []string `json:"violated-policies"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			a.violated = body.Violated
		}
		return a
	}, clk
}

func grpcParityApp(t *testing.T) (func(*testing.T, grpcStep) answer, *clock) {
	clk := &clock{now: start}
	api, broken, keyed := parityLimiters(t, memstore.New(memstore.WithClock(clk.Now)))
	quiet := ratekitgrpc.WithErrorHandler(func(context.Context, error) {})
	opts := []ratekitgrpc.Option{ratekitgrpc.WithHeaderClock(clk.Now), ratekitgrpc.WithoutDefaultSkips(), quiet}
	cost := ratekitgrpc.WithCostFunc(func(ctx context.Context) int64 {
		md, _ := metadata.FromIncomingContext(ctx)
		n, _ := strconv.ParseInt(strings.Join(md.Get("x-cost"), ""), 10, 64)
		return n
	})
	conns := map[string]*grpc.ClientConn{
		"api":    healthServer(t, ratekitgrpc.UnaryServerInterceptor(api, ratekitgrpc.ByIP(), append(opts, cost)...)),
		"closed": healthServer(t, ratekitgrpc.UnaryServerInterceptor(broken, ratekitgrpc.ByIP(), append(opts, ratekitgrpc.WithErrorPolicy(ratekit.FailClosed))...)),
		"keyed":  healthServer(t, ratekitgrpc.UnaryServerInterceptor(keyed, ratekitgrpc.ByMetadata("x-api-key"), opts...)),
	}
	return func(t *testing.T, s grpcStep) answer {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-cost", strconv.FormatInt(s.cost, 10))
		if !s.noKey {
			ctx = metadata.AppendToOutgoingContext(ctx, "x-api-key", "k")
		}
		var header, trailer metadata.MD
		_, err := healthpb.NewHealthClient(conns[s.group]).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header), grpc.Trailer(&trailer))
		return grpcAnswer(err, header, trailer)
	}, clk
}

// grpcAnswer is what a client learns of a call that ended with err: the
// rate-limit fields, from the headers of an admitted call (whatever its
// status) and the trailers of a refused one, and the details of its status.
func grpcAnswer(err error, header, trailer metadata.MD) answer {
	st := status.Convert(err)
	a := answer{code: st.Code(), fields: map[string]string{}}
	md := metadata.Join(header, trailer)
	for _, k := range rateFields {
		if v := md.Get(k); len(v) > 0 {
			a.fields[k] = v[0]
		}
	}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			a.retry = d.RetryDelay.AsDuration()
		case *errdetails.QuotaFailure:
			for _, v := range d.Violations {
				a.violated = append(a.violated, v.QuotaId)
			}
		}
	}
	return a
}

// healthServer serves the health service behind in on a loopback port and
// returns a client connection to it.
func healthServer(t testing.TB, in grpc.UnaryServerInterceptor) *grpc.ClientConn {
	t.Helper()
	return serveHealth(t, in, health.NewServer())
}

// serveHealth serves hs as the health service behind in on a loopback port
// and returns a client connection to it.
func serveHealth(t testing.TB, in grpc.UnaryServerInterceptor, hs healthpb.HealthServer) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer(grpc.UnaryInterceptor(in))
	healthpb.RegisterHealthServer(srv, hs)
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

// TestGRPCHungStoreIsBounded: a call whose store never answers is let
// through (fail open) within the timeout (100 ms) + 50 ms, as on net/http.
func TestGRPCHungStoreIsBounded(t *testing.T) {
	f := newFixture(t)
	conn := healthServer(t, ratekitgrpc.UnaryServerInterceptor(f.hung, ratekitgrpc.ByIP(), ratekitgrpc.WithoutDefaultSkips(),
		ratekitgrpc.WithErrorHandler(func(_ context.Context, err error) { f.report(err) })))
	var slowest time.Duration
	for range 10 {
		begin := time.Now()
		_, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
		elapsed := time.Since(begin)
		slowest = max(slowest, elapsed)
		if err != nil || elapsed < 90*time.Millisecond {
			t.Fatalf("%v after %v, want OK (fail open) after the 100 ms timeout", err, elapsed)
		}
	}
	if slowest > ratekit.DefaultTimeout+50*time.Millisecond {
		t.Fatalf("slowest call %v, want ≤ 150 ms", slowest)
	}
	if f.errors.Load() != 10 {
		t.Fatalf("%d errors reported, want 10", f.errors.Load())
	}
}
