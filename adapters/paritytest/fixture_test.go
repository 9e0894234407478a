package paritytest

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit/store/storetest"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
	"github.com/ratekit/ratekit/store/memstore"
)

// start is the fake clock's origin: X-RateLimit-Reset values are exact.
var start = time.Unix(1_800_000_000, 0)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// brokenStore fails every call, as a Redis that is down would. All its
// values are one store to ratekit.New: name the limits of its Limiters.
type brokenStore struct{}

var errDown = errors.New("ratekit: paritytest store is down")

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

// downSettler fails every call, as brokenStore does, and is a settler, so
// that a Limiter with an InFlight limit can be built on it.
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

// hungStore answers nothing until the call's context ends, as a Redis that
// accepts connections and never replies.
type hungStore struct{ brokenStore }

func (s hungStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (hungStore) Take(ctx context.Context, _ string, _ []ratekit.Limit, _ int64) (ratekit.Decision, error) {
	<-ctx.Done()
	return ratekit.Decision{}, ctx.Err()
}

// trust makes the test clients' proxies trusted: 192.0.2.0/24 in front of the
// httptest requests, and 0.0.0.0, the peer of Fiber's app.Test.
var trust = []clientip.Option{
	clientip.TrustProxies(netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("0.0.0.0/32")),
}

// fixture is what one framework's app is built from: its own memstore on its
// own fake clock, the same limits, the same options per route group.
// Groups: /api (skip /api/health, cost 2 for /api/heavy and 5 for
// /api/huge), /open and /closed (a failing store under FailOpen and
// FailClosed), /keyed (keyed by X-Api-Key), /login (problem+json,
// TOO_MANY_ATTEMPTS, IETF headers only), /conc (2 in flight), /downslots (2
// in flight on a failing store, failing open), /counted (statuses below 500
// count), /tokens (cost 100, settled by the handler).
type fixture struct {
	clock  *clock
	errors atomic.Int64     // errors the error policy reported
	obs    observe.Observer // every group's observer, when set

	api, keyed, login, broken, hung *ratekit.Limiter
	conc, concDown, counted, tokens *ratekit.Limiter

	entered chan string      // /conc/hold/<i> (and /downslots/hold/<i>) sends i when its handler runs
	release [3]chan struct{} // and holds it until release[i] is closed
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: &clock{now: start}}
	store := memstore.New(memstore.WithClock(f.clock.Now))
	must := func(l *ratekit.Limiter, err error) *ratekit.Limiter {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	f.api = must(ratekit.New(store, ratekit.FixedWindow(3, time.Minute).Named("api")))
	f.keyed = must(ratekit.New(store, ratekit.GCRA(2, time.Second, 2).Named("keyed")))
	f.login = must(ratekit.New(store, ratekit.FixedWindow(1, 15*time.Minute).Named("login")))
	f.broken = must(ratekit.New(brokenStore{}, ratekit.FixedWindow(3, time.Minute).Named("api")))
	f.hung = must(ratekit.New(hungStore{}, ratekit.FixedWindow(3, time.Minute).Named("api")))
	f.conc = must(ratekit.New(store, ratekit.InFlight(2).Named("conc")))
	f.concDown = must(ratekit.New(downSettler{}, ratekit.InFlight(2).Named("conc")))
	f.counted = must(ratekit.New(store, ratekit.FixedWindow(10, time.Minute).Named("counted")))
	f.tokens = must(ratekit.New(store, ratekit.FixedWindow(1000, time.Minute).Named("tokens")))
	f.entered = make(chan string, len(f.release))
	for i := range f.release {
		f.release[i] = make(chan struct{})
	}
	return f
}

// options is one framework's option constructors: ratekit's for net/http,
// and each adapter's own functions of the same names, so that every group is
// configured alike on every framework, and through the adapter's public API.
type options[O any] struct {
	clock    func(now func() time.Time) O         // WithHeaderClock
	policy   func(p ratekit.ErrorPolicy) O        // WithErrorPolicy
	code     func(c response.Code) O              // WithErrorCode
	renderer func(r response.Renderer) O          // WithRenderer
	headers  func(m ratekit.HeaderMode) O         // WithHeaders
	onError  func(report func(err error)) O       // WithErrorHandler, adapted
	skip     func(skip func(path string) bool) O  // WithSkip, adapted
	cost     func(cost func(path string) int64) O // WithCostFunc, adapted
	observer func(obs ...observe.Observer) O      // WithObserver
	countIf  func(counts func(status int) bool) O // WithCountIf
	settle   func() O                             // WithSettle
}

// Options of each group.
func apiOpts[O any](f *fixture, o options[O]) []O {
	return []O{o.clock(f.clock.Now), o.onError(f.report), o.skip(skip), o.cost(cost), o.observer(f.obs)}
}

func keyedOpts[O any](f *fixture, o options[O]) []O {
	return []O{o.clock(f.clock.Now), o.onError(f.report), o.observer(f.obs)}
}

func openOpts[O any](f *fixture, o options[O]) []O {
	return []O{o.clock(f.clock.Now), o.onError(f.report), o.observer(f.obs)}
}

func closedOpts[O any](f *fixture, o options[O]) []O {
	return []O{o.policy(ratekit.FailClosed), o.onError(f.report), o.observer(f.obs)}
}

func loginOpts[O any](f *fixture, o options[O]) []O {
	return []O{o.clock(f.clock.Now), o.code(response.CodeTooManyAttempts),
		o.renderer(response.Problem), o.headers(ratekit.HeadersIETF), o.onError(f.report), o.observer(f.obs)}
}

func concOpts[O any](f *fixture, o options[O]) []O {
	return []O{o.clock(f.clock.Now), o.onError(f.report)}
}

func countedOpts[O any](f *fixture, o options[O]) []O {
	return []O{o.clock(f.clock.Now), o.onError(f.report), o.countIf(func(status int) bool { return status < 500 })}
}

func tokensOpts[O any](f *fixture, o options[O]) []O {
	return []O{o.clock(f.clock.Now), o.onError(f.report), o.cost(func(string) int64 { return 100 }), o.settle()}
}

// handle is what the handler behind /conc, /counted and /tokens does, on
// every framework, given the request's path, its query parameter "used" and
// the context that carries its Reservation; it returns the status to
// answer. /conc/hold/<i> is held until release[i] is closed, /counted/<code>
// answers code, /tokens settles the request's cost at used.
func (f *fixture) handle(ctx context.Context, path, used string) int {
	switch {
	case strings.HasPrefix(path, "/conc/hold/") || strings.HasPrefix(path, "/downslots/hold/"):
		_, n, _ := strings.Cut(path, "/hold/")
		i, _ := strconv.Atoi(n)
		f.entered <- strconv.Itoa(i)
		<-f.release[i]
	case strings.HasPrefix(path, "/counted/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(path, "/counted/"))
		return code
	case strings.HasPrefix(path, "/tokens/"):
		n, _ := strconv.ParseInt(used, 10, 64)
		if err := ratekit.ReservationFrom(ctx).Settle(ctx, n); err != nil {
			return 599 // the test sees it
		}
	}
	return 200
}

// report counts an error the error policy handled.
func (f *fixture) report(err error) {
	if err != nil {
		f.errors.Add(1)
	}
}

// skip and cost are the /api group's rules, given the request path; each
// framework calls them from its own context.
func skip(path string) bool { return path == "/api/health" }

func cost(path string) int64 {
	switch {
	case strings.HasSuffix(path, "/heavy"):
		return 2
	case strings.HasSuffix(path, "/huge"):
		return 5
	}
	return 1
}

// The handler behind every route answers 200 "ok <path>" as text.
const textPlain = "text/plain; charset=utf-8"

func okBody(path string) []byte { return []byte("ok " + path) }
