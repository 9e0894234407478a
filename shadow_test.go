package ratekit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// outcomes counts observed events by outcome and policy.
type outcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomes) Observe(_ context.Context, e observe.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[e.Outcome.String()+" "+e.Policy]++
}

func (o *outcomes) get(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[key]
}

// TestShadowLimitRefusesNone: a limit of 10 in shadow mode under 100
// concurrent requests refuses none and reports exactly 90 would-be denials;
// its counter holds exactly what it would hold if it were enforced.
func TestShadowLimitRefusesNone(t *testing.T) {
	store := memstore.New()
	l, err := ratekit.New(store, ratekit.FixedWindow(10, time.Minute).Named("new").Shadow())
	if err != nil {
		t.Fatal(err)
	}
	var seen outcomes
	h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithObserver(&seen))(ok)
	var wg sync.WaitGroup
	codes := make([]int, 100)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			codes[i] = w.Code
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Fatalf("request %d: %d; a shadow limit must refuse nothing", i, c)
		}
	}
	if a, s := seen.get("allowed new"), seen.get("shadow_denied new"); a != 10 || s != 90 {
		t.Fatalf("observed %d allowed and %d shadow denials, want 10 and 90 (%v)", a, s, seen.n)
	}
	enforced, err := ratekit.New(store, ratekit.FixedWindow(10, time.Minute).Named("new"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := enforced.Peek(context.Background(), "192.0.2.1")
	if err != nil || d.Allowed || d.Remaining != 0 {
		t.Fatalf("enforcing the limit later: %+v %v; its shadow counts must carry over", d, err)
	}
}

// TestShadowBesideEnforced: in a Limiter with an enforced and a shadow
// limit, a request the enforced limit refuses is refused and not counted by
// the shadow limit; one it admits passes whatever the shadow limit says. A
// calendar quota on trial behaves alike.
func TestShadowBesideEnforced(t *testing.T) {
	for _, trial := range []ratekit.Limit{ratekit.FixedWindow(2, time.Minute), ratekit.Calendar(2, calendar.Day, nil)} {
		t.Run(trial.String(), func(t *testing.T) { shadowBesideEnforced(t, trial.Named("trial").Shadow()) })
	}
}

func shadowBesideEnforced(t *testing.T, trial ratekit.Limit) {
	l := newLimiter(t, ratekit.FixedWindow(5, time.Minute).Named("live"), trial)
	ctx := context.Background()
	var got []string
	for range 7 {
		d, err := l.Allow(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, map[bool]string{true: "ok", false: "429"}[d.Allowed]+map[bool]string{true: "/shadow", false: ""}[d.ShadowDenied])
		if d.Limit.Name() != "live" || d.States != nil {
			t.Fatalf("decision describes %q with %d states; want the enforced limit alone, States nil", d.Limit.Name(), len(d.States))
		}
	}
	want := []string{"ok", "ok", "ok/shadow", "ok/shadow", "ok/shadow", "429", "429"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// TestShadowHeaders: the headers of a Limiter with a shadow limit describe
// the enforced limits only; a Limiter of shadow limits alone describes them
// without a Retry-After.
func TestShadowHeaders(t *testing.T) {
	mixed := newLimiter(t, ratekit.FixedWindow(5, time.Minute).Named("live"),
		ratekit.FixedWindow(1, time.Minute).Named("trial").Shadow())
	srv := serve(t, mixed, ratekit.ByIP())
	get(t, srv.URL)
	r := get(t, srv.URL)
	wantHeaders(t, r, map[string]string{"RateLimit-Policy": `"live";q=5;w=60`, "X-RateLimit-Remaining": "3", "Retry-After": ""})

	alone := newLimiter(t, ratekit.FixedWindow(1, time.Minute).Named("solo").Shadow())
	srv = serve(t, alone, ratekit.ByIP())
	get(t, srv.URL)
	r = get(t, srv.URL)
	if r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	wantHeaders(t, r, map[string]string{"RateLimit-Policy": `"solo";q=1;w=60`, "X-RateLimit-Remaining": "0", "Retry-After": "", "Cache-Control": ""})
}
