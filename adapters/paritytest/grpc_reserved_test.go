package paritytest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
)

// grpcOptions are ratekitgrpc's options of ratekit's names, reading the path
// of a call from its x-path metadata. gRPC has no renderer: a status
// replaces the body.
var grpcOptions = options[ratekitgrpc.Option]{
	clock: ratekitgrpc.WithHeaderClock, policy: ratekitgrpc.WithErrorPolicy, code: ratekitgrpc.WithErrorCode,
	headers: ratekitgrpc.WithHeaders, observer: ratekitgrpc.WithObserver,
	countIf: ratekitgrpc.WithCountIf, settle: ratekitgrpc.WithSettle,
	onError: func(report func(error)) ratekitgrpc.Option {
		return ratekitgrpc.WithErrorHandler(func(_ context.Context, err error) { report(err) })
	},
	skip: func(skip func(string) bool) ratekitgrpc.Option {
		return ratekitgrpc.WithSkip(func(ctx context.Context) bool { return skip(incoming(ctx, "x-path")) })
	},
	cost: func(cost func(string) int64) ratekitgrpc.Option {
		return ratekitgrpc.WithCostFunc(func(ctx context.Context) int64 { return cost(incoming(ctx, "x-path")) })
	},
}

// incoming returns the metadata value name of the call whose context is ctx.
func incoming(ctx context.Context, name string) string {
	md, _ := metadata.FromIncomingContext(ctx)
	return strings.Join(md.Get(name), ",")
}

// countedCodes are the codes the /counted handler ends calls with; over
// net/http it answers each one's ratekitgrpc.HTTPStatus.
var countedCodes = []codes.Code{
	codes.OK, codes.Unavailable, codes.NotFound, codes.Internal, codes.PermissionDenied, codes.DeadlineExceeded, codes.OK,
}

// codeOf is the code of each HTTP status the sequence answers (for any
// other, a code that names the status, so that a test sees it).
func codeOf(status int) codes.Code {
	for _, c := range append(countedCodes, codes.ResourceExhausted) {
		if ratekitgrpc.HTTPStatus(c) == status {
			return c
		}
	}
	return codes.Code(status)
}

// handled is the health service of the fixture's /conc, /counted and
// /tokens handler: it does what fixture.handle does for the call's x-path
// and x-used, and ends the call with the code of the status it answers.
type handled struct {
	healthpb.UnimplementedHealthServer
	f *fixture
}

func (h handled) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	s := h.f.handle(ctx, incoming(ctx, "x-path"), incoming(ctx, "x-used"))
	if s == http.StatusOK {
		return &healthpb.HealthCheckResponse{}, nil
	}
	return nil, status.Error(codeOf(s), "answered "+strconv.Itoa(s))
}

// A reservedDo sends one request or call of path (with "used" for
// /tokens) to a fixture's app.
type reservedDo func(path, used string) answer

func httpReservedApp(t *testing.T, f *fixture) reservedDo {
	do := netHTTPApp(f)
	return func(path, used string) answer {
		r := do(t, request(step{path: path + "?used=" + used, xff: clientA}))
		a := answer{code: codeOf(r.status), fields: map[string]string{}}
		for _, k := range rateFields {
			if v := r.header.Get(k); v != "" {
				a.fields[k] = v
			}
		}
		return a
	}
}

func grpcReservedApp(t *testing.T, f *fixture) reservedDo {
	o, all := grpcOptions, ratekitgrpc.WithoutDefaultSkips()
	serve := func(l *ratekit.Limiter, opts []ratekitgrpc.Option) *grpc.ClientConn {
		return serveHealth(t, ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByIP(), append(opts, all)...), handled{f: f})
	}
	conns := map[string]*grpc.ClientConn{
		"conc": serve(f.conc, concOpts(f, o)), "counted": serve(f.counted, countedOpts(f, o)), "tokens": serve(f.tokens, tokensOpts(f, o)),
	}
	return func(path, used string) answer {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-path", path, "x-used", used)
		var header, trailer metadata.MD
		_, err := healthpb.NewHealthClient(conns[strings.Split(path, "/")[1]]).Check(ctx, &healthpb.HealthCheckRequest{},
			grpc.Header(&header), grpc.Trailer(&trailer))
		return grpcAnswer(err, header, trailer)
	}
}

// reservedSequence sends the sequence through do on f's app: two calls held
// open under InFlight(2) and a third refused, each returning call giving
// its slot back; calls ending with countedCodes under WithCountIf (statuses
// below 500 count); calls settling their real cost under WithSettle (cost
// 100 as the estimate). It returns the answers in order.
func reservedSequence(t *testing.T, f *fixture, do reservedDo) []answer {
	hold := func(i int) chan answer {
		out := make(chan answer, 1)
		go func() { out <- do("/conc/hold/"+strconv.Itoa(i), "") }()
		if got := <-f.entered; got != strconv.Itoa(i) {
			t.Fatalf("handler %s entered, want %d", got, i)
		}
		return out
	}
	first, second := hold(1), hold(2)
	got := []answer{do("/conc/x", "")}
	close(f.release[1])
	got = append(got, <-first, do("/conc/x", ""))
	close(f.release[2])
	got = append(got, <-second, do("/conc/x", ""))
	for _, c := range countedCodes {
		got = append(got, do("/counted/"+strconv.Itoa(ratekitgrpc.HTTPStatus(c)), ""))
	}
	for _, used := range []string{"7", "130", "0", "100"} {
		got = append(got, do("/tokens/x", used))
	}
	return got
}

// TestGRPCReservedParity: the in-flight, count-if and settle sequence gives
// the same codes and the same rate-limit fields and Retry-After through
// net/http (ratekit.Middleware) as through a real gRPC server and client
// (ratekitgrpc), each on its own fixture, and leaves the same counts.
func TestGRPCReservedParity(t *testing.T) {
	const policy = `"conc";q=2;qu="concurrent-requests"`
	type expected struct {
		code   codes.Code
		fields map[string]string // some of the fields, on both
	}
	want := []expected{
		{codes.ResourceExhausted, map[string]string{"ratelimit-policy": policy, "ratelimit": `"conc";r=0`, "retry-after": "1"}},
		{codes.OK, map[string]string{"ratelimit": `"conc";r=1`, "retry-after": ""}},
		{codes.OK, map[string]string{"ratelimit": `"conc";r=0`}},
		{codes.OK, map[string]string{"ratelimit": `"conc";r=0`}},
		{codes.OK, map[string]string{"ratelimit": `"conc";r=1`}},
	}
	for i, c := range countedCodes { // remaining at admission: 9, then one less after each status below 500
		left := 9 - i
		for _, before := range countedCodes[:i] {
			if ratekitgrpc.HTTPStatus(before) >= 500 {
				left++
			}
		}
		want = append(want, expected{c, map[string]string{"x-ratelimit-remaining": strconv.Itoa(left)}})
	}
	for _, left := range []string{"900", "893", "763", "763"} {
		want = append(want, expected{codes.OK, map[string]string{"x-ratelimit-remaining": left}})
	}

	hf, gf := newFixture(t), newFixture(t)
	h, g := reservedSequence(t, hf, httpReservedApp(t, hf)), reservedSequence(t, gf, grpcReservedApp(t, gf))
	for i, w := range want {
		if h[i].code != w.code || g[i].code != w.code {
			t.Errorf("answer %d: net/http %v, gRPC %v, want %v", i+1, h[i].code, g[i].code, w.code)
		}
		if !equalFields(h[i].fields, g[i].fields) {
			t.Errorf("answer %d differs:\n  net/http %v\n  gRPC     %v", i+1, h[i].fields, g[i].fields)
		}
		for k, v := range w.fields {
			if g[i].fields[k] != v {
				t.Errorf("answer %d: %s %q, want %q", i+1, k, g[i].fields[k], v)
			}
		}
	}
	if g[0].retry != time.Second || fmt.Sprint(g[0].violated) != "[conc]" {
		t.Errorf("in-flight refusal: RetryInfo %v, violated %v; want 1s, [conc]", g[0].retry, g[0].violated)
	}

	httpKey, err := ratekit.ByIP(trust...)(request(step{path: "/", xff: clientA}))
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		name string
		f    *fixture
		key  string
	}{{"net/http", hf, httpKey}, {"gRPC", gf, "127.0.0.1"}} {
		for _, l := range []struct {
			limiter *ratekit.Limiter
			left    int64
		}{{side.f.conc, 2}, {side.f.counted, 10 - 4}, {side.f.tokens, 1000 - 237}} {
			if d, err := l.limiter.Peek(context.Background(), side.key); err != nil || d.Remaining != l.left {
				t.Errorf("%s %s: %d left, %v; want %d", side.name, d.Limit.Name(), d.Remaining, err, l.left)
			}
		}
		if n := side.f.errors.Load(); n != 0 {
			t.Errorf("%s: %d errors reported, want 0", side.name, n)
		}
	}
}
