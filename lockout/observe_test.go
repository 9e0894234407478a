package lockout_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestLockoutObserver: Attempt and Check report their outcome under the
// lockout's name, the binding window's numbers and the subject; Reset and
// Refund report nothing.
func TestLockoutObserver(t *testing.T) {
	var events []observe.Event
	var errs []error
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		errs = append(errs, e.Err)
		e.Err, e.Latency = nil, 0
		events = append(events, e)
	})
	cfg := lockout.Config{Name: "login", Observer: obs, Windows: []lockout.Window{
		{Scope: "temp", Attempts: 3, Window: time.Minute, Block: time.Minute},
		{Scope: "long", Attempts: 4, Window: time.Hour, Block: time.Hour},
	}}
	lo, err := lockout.New(memstore.New(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 4 {
		if _, err := lo.Attempt(ctx, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = lo.Check(ctx, "alice")
	_ = lo.Reset(ctx, "alice")
	_, _ = lo.Attempt(ctx, "")
	broken, err := lockout.New(downStore{memstore.New()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = broken.Attempt(ctx, "bob")
	ev := func(o observe.Outcome, quota, remaining int64, subject string) observe.Event {
		return observe.Event{Outcome: o, Policy: "login", Quota: quota, Remaining: remaining, Cost: 1, Subject: subject}
	}
	want := []observe.Event{
		ev(observe.Allowed, 3, 2, "alice"),
		ev(observe.Allowed, 3, 1, "alice"),
		ev(observe.Allowed, 3, 0, "alice"),
		ev(observe.Denied, 3, 0, "alice"),
		ev(observe.Denied, 3, 0, "alice"),
		ev(observe.Invalid, 0, 0, ""),
		ev(observe.Error, 0, 0, "bob"),
	}
	if len(events) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(events), len(want), events)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Errorf("event %d:\n got  %+v\n want %+v", i, events[i], want[i])
		}
	}
	if !errors.Is(errs[5], ratekit.ErrEmptyKey) || errs[6] == nil || errs[0] != nil {
		t.Fatalf("errors %v", errs)
	}
}
