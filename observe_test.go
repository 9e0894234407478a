package ratekit_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// recorder keeps every observed event.
type recorder struct {
	mu     sync.Mutex
	events []observe.Event
}

func (r *recorder) Observe(_ context.Context, e observe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// fallbackStore marks every decision of a working store as a fallback one.
type fallbackStore struct{ ratekit.Store }

func (s fallbackStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (s fallbackStore) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	d, err := storetest.Take(ctx, s.Store, key, limits, cost)
	d.Fallback = true
	return d, err
}

// TestObserverSeesEveryOutcome: each kind of decision reaches the observer
// once, with its outcome, binding policy, numbers and subject.
func TestObserverSeesEveryOutcome(t *testing.T) {
	var rec recorder
	opt := ratekit.WithObserver(&rec)
	live := newLimiter(t, ratekit.FixedWindow(10, time.Minute).Named("burst"), ratekit.FixedWindow(2, time.Minute).Named("tight"))
	broken, _ := ratekit.New(failingStore{}, ratekit.FixedWindow(1, time.Minute).Named("a"), ratekit.GCRA(1, time.Second, 1).Named("b"))
	local, _ := ratekit.New(fallbackStore{memstore.New()}, ratekit.FixedWindow(3, time.Minute).Named("fb"))
	badKey := ratekit.KeyFunc(func(*http.Request) (string, error) { return "", errors.New("no key") })
	cases := []struct {
		l    *ratekit.Limiter
		key  ratekit.KeyFunc
		want observe.Event
	}{
		{live, ratekit.ByIP(), observe.Event{Outcome: observe.Allowed, Policy: "tight", Quota: 2, Remaining: 1, Cost: 1, Subject: "192.0.2.1"}},
		{live, ratekit.ByIP(), observe.Event{Outcome: observe.Allowed, Policy: "tight", Quota: 2, Remaining: 0, Cost: 1, Subject: "192.0.2.1"}},
		{live, ratekit.ByIP(), observe.Event{Outcome: observe.Denied, Policy: "tight", Quota: 2, Remaining: 0, Cost: 1, Subject: "192.0.2.1"}},
		{broken, ratekit.ByIP(), observe.Event{Outcome: observe.Error, Policy: "a,b", Cost: 1, Subject: "192.0.2.1"}},
		{live, badKey, observe.Event{Outcome: observe.Invalid, Policy: "burst,tight", Cost: 1}},
		{local, ratekit.ByIP(), observe.Event{Outcome: observe.Allowed, Policy: "fb", Quota: 3, Remaining: 2, Cost: 1, Fallback: true, Subject: "192.0.2.1"}},
	}
	for i, c := range cases {
		h := ratekit.Middleware(c.l, c.key, opt)(ok)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		if len(rec.events) != i+1 {
			t.Fatalf("case %d: %d events, want %d", i, len(rec.events), i+1)
		}
		got := rec.events[i]
		if (got.Err != nil) != (c.want.Outcome >= observe.Error) {
			t.Fatalf("case %d: error %v for outcome %v", i, got.Err, got.Outcome)
		}
		storeAsked := c.want.Outcome != observe.Invalid
		if (got.Latency > 0) != storeAsked || got.Latency > time.Second {
			t.Fatalf("case %d: latency %v (store asked: %v)", i, got.Latency, storeAsked)
		}
		got.Err, got.Latency = nil, 0
		if got != c.want {
			t.Fatalf("case %d:\n got  %+v\n want %+v", i, got, c.want)
		}
	}
}

// TestObserversAddUp: several WithObserver options all see each decision;
// Join skips nil observers.
func TestObserversAddUp(t *testing.T) {
	var a, b recorder
	l := newLimiter(t, ratekit.FixedWindow(1, time.Minute))
	h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithObserver(&a), ratekit.WithObserver(nil, &b))(ok)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if len(a.events) != 1 || len(b.events) != 1 {
		t.Fatalf("events: %d and %d, want 1 each", len(a.events), len(b.events))
	}
	if observe.Join() != nil || observe.Join(nil, nil) != nil {
		t.Fatal("Join of no observers must be nil")
	}
}
