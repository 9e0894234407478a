package observetest

import (
	"context"
	"errors"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// scenarios are what Run runs, by name.
var scenarios = []struct {
	name string
	run  func(t *testing.T, setup Setup)
}{
	{"DeniedAfterQuota", deniedAfterQuota},
	{"ShadowOnly", shadowOnly},
	{"ShadowBesideEnforced", shadowBesideEnforced},
	{"StoreError", storeError},
	{"InvalidKey", invalidKey},
	{"NearLimit", nearLimit},
	{"Fallback", fallback},
	{"Lockout", lockoutAttempts},
	{"ConcurrentObserve", concurrentObserve},
	{"UnknownOutcome", unknownOutcome},
	{"InFlight", inFlight},
}

// deniedAfterQuota: quota 3, five requests: three allowed, two denied, one
// near limit (the third leaves 0 of 3), five store latencies.
func deniedAfterQuota(t *testing.T, setup Setup) {
	obs, check := setup(t)
	h := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(3, time.Minute).Named("api")),
		ratekit.ByIP(), ratekit.WithObserver(obs))(okHandler)
	statuses(t, send(h, 5), map[int]int{200: 3, 429: 2})
	check(one(0, "api", Counts{Allowed: 3, Denied: 2, Near: 1, Latency: 5}))
}

// shadowOnly: a shadow limit of 10 refuses nothing; of 100 requests it
// counts 10 allowed and 90 shadow_denied. Near limit: the allowed requests
// that leave 2, 1 and 0 of 10.
func shadowOnly(t *testing.T, setup Setup) {
	obs, check := setup(t)
	h := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(10, time.Minute).Named("new").Shadow()),
		ratekit.ByIP(), ratekit.WithObserver(obs))(okHandler)
	statuses(t, send(h, 100), map[int]int{200: 100})
	check(one(0, "new", Counts{Allowed: 10, ShadowDenied: 90, Near: 3, Latency: 100}))
}

// shadowBesideEnforced: the policy follows the binding limit. With "api"
// (5, enforced) and "new" (2, shadow), requests 1-2 pass both (api binds),
// 3-5 pass api but not new (shadow_denied, new binds), 6-7 are denied by
// api (new is not asked).
func shadowBesideEnforced(t *testing.T, setup Setup) {
	obs, check := setup(t)
	l := limiter(t, memstore.New(), ratekit.FixedWindow(5, time.Minute).Named("api"),
		ratekit.FixedWindow(2, time.Minute).Named("new").Shadow())
	h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithObserver(obs))(okHandler)
	statuses(t, send(h, 7), map[int]int{200: 5, 429: 2})
	check(Want{Policies: map[string]Counts{
		"api": {Allowed: 2, Denied: 2, Latency: 4},
		"new": {ShadowDenied: 3, Latency: 3},
	}})
}

// storeError: a failing store gives outcome error and a store error; the
// request passes (fail-open by default) and its latency is recorded.
// Errors carry the names of all the call's limits.
func storeError(t *testing.T, setup Setup) {
	obs, check := setup(t)
	l := limiter(t, failingStore{}, ratekit.FixedWindow(3, time.Minute).Named("a"), ratekit.GCRA(1, time.Second, 1).Named("b"))
	var reported []error
	h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithObserver(obs),
		ratekit.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) }))(okHandler)
	statuses(t, send(h, 1), map[int]int{200: 1}) // fail-open
	if len(reported) != 1 || !errors.Is(reported[0], errDown) {
		t.Fatalf("error handler got %v", reported)
	}
	check(one(0, "a,b", Counts{Errors: 1, Latency: 1}))
}

// invalidKey: a key function that fails gives outcome invalid, 400 by
// default, and no latency: no store was asked.
func invalidKey(t *testing.T, setup Setup) {
	obs, check := setup(t)
	noKey := ratekit.KeyFunc(func(*http.Request) (string, error) { return "", errors.New("no key") })
	h := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(3, time.Minute).Named("api")),
		noKey, ratekit.WithObserver(obs))(okHandler)
	statuses(t, send(h, 2), map[int]int{400: 2})
	check(one(0, "api", Counts{Invalid: 2}))
}

// nearLimit: an allowed call is near its limit when what it leaves is at
// most a fifth of the quota (Event.NearLimit). With quota 10, the calls
// that leave 2, 1 and 0 count; denials never do.
func nearLimit(t *testing.T, setup Setup) {
	for _, c := range []struct {
		name                  string
		quota, cost           int64
		requests              int
		allowed, denied, near int
	}{
		{"cost 1", 10, 1, 12, 10, 2, 3}, // leaves 9..0: 2, 1, 0 count
		{"cost 2", 10, 2, 7, 5, 2, 2},   // leaves 8, 6, 4, 2, 0: 2 and 0 count
		{"cost 3", 10, 3, 4, 3, 1, 1},   // leaves 7, 4, 1: 1 counts; 3 > 1 left is denied
		{"quota 4", 4, 1, 4, 4, 0, 1},   // a fifth of 4 is 0.8: only the call leaving 0 counts
	} {
		t.Run(c.name, func(t *testing.T) {
			obs, check := setup(t)
			h := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(c.quota, time.Minute).Named("api")),
				ratekit.ByIP(), ratekit.WithCost(c.cost), ratekit.WithObserver(obs))(okHandler)
			statuses(t, send(h, c.requests), map[int]int{200: c.allowed, 429: c.denied})
			check(one(0, "api", Counts{Allowed: c.allowed, Denied: c.denied, Near: c.near, Latency: c.requests}))
		})
	}
}

// fallback: decisions of a fallback store count as fallback decisions
// (denials too) and set the fallback-active gauge to 1; store errors and
// invalid requests leave it; the next decision of a primary store sets it
// to 0.
func fallback(t *testing.T, setup Setup) {
	obs, check := setup(t)
	opt := ratekit.WithObserver(obs)
	onFallback := limiter(t, fallbackStore{memstore.New()}, ratekit.FixedWindow(2, time.Minute).Named("local"))
	primary := ratekit.Middleware(limiter(t, memstore.New(), ratekit.FixedWindow(9, time.Minute).Named("api")), ratekit.ByIP(), opt)(okHandler)
	fallback := ratekit.Middleware(onFallback, ratekit.ByIP(), opt)(okHandler)
	broken := ratekit.Middleware(limiter(t, failingStore{}, ratekit.FixedWindow(9, time.Minute).Named("down")), ratekit.ByIP(), opt)(okHandler)
	invalid := ratekit.Middleware(onFallback, ratekit.ByHeader("X-Api-Key"), opt)(okHandler)

	check(Want{})
	statuses(t, send(fallback, 3), map[int]int{200: 2, 429: 1})
	local := Counts{Allowed: 2, Denied: 1, Near: 1, Fallback: 3, Latency: 3}
	check(Want{Active: 1, Policies: map[string]Counts{"local": local}})

	statuses(t, send(broken, 1), map[int]int{200: 1})  // fail-open
	statuses(t, send(invalid, 1), map[int]int{400: 1}) // no X-Api-Key
	local.Invalid = 1
	down := Counts{Errors: 1, Latency: 1}
	check(Want{Active: 1, Policies: map[string]Counts{"local": local, "down": down}})

	statuses(t, send(primary, 1), map[int]int{200: 1})
	check(Want{Active: 0, Policies: map[string]Counts{"local": local, "down": down, "api": {Allowed: 1, Latency: 1}}})
}

// lockoutAttempts: a lockout reports each Attempt and Check under its
// name. Three attempts of three pass (the third leaves 0: near limit), the
// fourth trips the block and the fifth meets it; a Check during the block
// is a denial; Reset and Refund are not decisions; an empty key is invalid.
func lockoutAttempts(t *testing.T, setup Setup) {
	obs, check := setup(t)
	lo, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Observer: obs, Windows: []lockout.Window{
		{Scope: "temp", Attempts: 3, Window: 15 * time.Minute, Block: 15 * time.Minute},
		{Scope: "long", Attempts: 10, Window: 24 * time.Hour, Block: 24 * time.Hour},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var allowed, denied int
	for range 5 {
		d, err := lo.Attempt(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			allowed++
		} else {
			denied++
		}
	}
	if allowed != 3 || denied != 2 {
		t.Fatalf("%d allowed, %d denied; want 3 and 2", allowed, denied)
	}
	if d, err := lo.Check(ctx, "alice"); err != nil || d.Allowed {
		t.Fatalf("check during the block: %+v, %v", d, err)
	}
	d, err := lo.Attempt(ctx, "carol") // allowed, leaves 2 of 3
	if err != nil || !d.Allowed {
		t.Fatalf("carol: %+v, %v", d, err)
	}
	if err := lo.Refund(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := lo.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := lo.Attempt(ctx, ""); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
	check(one(0, "login", Counts{Allowed: 4, Denied: 3, Invalid: 1, Near: 1, Latency: 7}))
}

// concurrentObserve: goroutines reporting at once, some of them about
// policies not seen before, lose no count (run with -race).
func concurrentObserve(t *testing.T, setup Setup) {
	obs, check := setup(t)
	const workers, each, nPolicies = 8, 500, 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				obs.Observe(context.Background(), observe.Event{
					Outcome: observe.Outcome(i % 2), // allowed, denied
					Policy:  fmt.Sprintf("p%d", (w+i)%nPolicies),
					Quota:   10, Remaining: 0, Latency: time.Microsecond,
				})
			}
		}()
	}
	wg.Wait()
	// Each policy gets workers*each/nPolicies events. A worker gives a
	// policy one outcome (i's parity is fixed by (w+i)%4); half the workers
	// give it allowed, half denied.
	per := workers * each / nPolicies
	w := Want{Policies: map[string]Counts{}}
	for p := range nPolicies {
		w.Policies[fmt.Sprintf("p%d", p)] = Counts{Allowed: per / 2, Denied: per / 2, Near: per / 2, Latency: per}
	}
	check(w)
}

// unknownOutcome: an outcome this version does not know is counted as
// "unknown", touches nothing else and leaves the fallback-active gauge.
func unknownOutcome(t *testing.T, setup Setup) {
	obs, check := setup(t)
	obs.Observe(context.Background(), observe.Event{Outcome: observe.Allowed, Policy: "api", Fallback: true})
	obs.Observe(context.Background(), observe.Event{Outcome: 99, Policy: "api"})
	check(one(1, "api", Counts{Allowed: 1, Unknown: 1, Fallback: 1}))
}

// Subjects are every key DriveSubjects decides about: IPs, an API key, a
// lockout account. None may appear in any metric.
var Subjects = []string{"192.0.2.1", "203.0.113.9", "alice", "bob@example.com"}

// DriveSubjects makes obs decide about each of Subjects, through a
// middleware by IP, one by API key and one on a failing store, and a
// lockout (allowed, denied, store error, invalid decisions), and returns
// what the metrics must then hold.
func DriveSubjects(t *testing.T, obs observe.Observer) Want {
	t.Helper()
	opt := ratekit.WithObserver(obs)
	store := memstore.New()
	api := ratekit.Middleware(limiter(t, store, ratekit.FixedWindow(1, time.Minute).Named("api")), ratekit.ByIP(), opt)(okHandler)
	keyed := ratekit.Middleware(limiter(t, store, ratekit.FixedWindow(5, time.Minute).Named("keyed")), ratekit.ByHeader("X-Api-Key"), opt)(okHandler)
	broken := ratekit.Middleware(limiter(t, failingStore{}, ratekit.FixedWindow(5, time.Minute).Named("down")), ratekit.ByIP(), opt)(okHandler)
	statuses(t, send(api, 2), map[int]int{200: 1, 429: 1})                                                      // 192.0.2.1
	statuses(t, send(api, 1, func(r *http.Request) { r.RemoteAddr = "203.0.113.9:4000" }), map[int]int{200: 1}) // allowed
	statuses(t, send(keyed, 1, func(r *http.Request) { r.Header.Set("X-Api-Key", "alice") }), map[int]int{200: 1})
	statuses(t, send(keyed, 1), map[int]int{400: 1})  // invalid: no key
	statuses(t, send(broken, 1), map[int]int{200: 1}) // error, fail-open
	lo, err := lockout.New(store, lockout.Config{Name: "login", Observer: obs,
		Windows: []lockout.Window{{Scope: "temp", Attempts: 1, Window: time.Minute, Block: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		d, err := lo.Attempt(context.Background(), "bob@example.com")
		if err != nil || d.Allowed != (i == 0) {
			t.Fatalf("bob@example.com, attempt %d: %+v, %v", i+1, d, err)
		}
	}
	return Want{Policies: map[string]Counts{
		"api":   {Allowed: 2, Denied: 1, Near: 2, Latency: 3},
		"keyed": {Allowed: 1, Invalid: 1, Latency: 1},
		"down":  {Errors: 1, Latency: 1},
		"login": {Allowed: 1, Denied: 1, Near: 1, Latency: 2},
	}}
}

// failingStore fails every call, as a Redis that is down would.
type failingStore struct{}

var errDown = errors.New("ratekit: test store is down")

func (s failingStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (failingStore) Take(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (failingStore) Peek(context.Context, string, []ratekit.Limit) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (failingStore) Reset(context.Context, string, []ratekit.Limit) error { return errDown }

// fallbackStore marks every decision of a working store as a fallback
// store's, as store/fallback does while the primary store is down.
type fallbackStore struct{ ratekit.Store }

func (s fallbackStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s fallbackStore) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	d, err := storetest.Take(ctx, s.Store, key, limits, cost)
	d.Fallback = true
	return d, err
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})

// send makes n requests to h from the test client 192.0.2.1 and returns
// how many got each status.
func send(h http.Handler, n int, prepare ...func(*http.Request)) map[int]int {
	statuses := map[int]int{}
	for range n {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, p := range prepare {
			p(req)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		statuses[rec.Code]++
	}
	return statuses
}

// limiter builds a Limiter or fails the test.
func limiter(t *testing.T, s ratekit.Store, limits ...ratekit.Limit) *ratekit.Limiter {
	t.Helper()
	l, err := ratekit.New(s, limits...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
