package observe_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit/observe"
)

// TestLogLeavesSubjectsOut: decision logs are debug records without the
// subject unless LogSubjects asks for it.
func TestLogLeavesSubjectsOut(t *testing.T) {
	e := observe.Event{Outcome: observe.Denied, Policy: "api", Quota: 10, Cost: 1, Latency: 2 * time.Millisecond, Subject: "203.0.113.9"}
	for _, tc := range []struct {
		opts []observe.LogOption
		want string
	}{
		{nil, `level=DEBUG msg="ratekit decision" outcome=denied policy=api quota=10 remaining=0 cost=1 latency=2ms` + "\n"},
		{[]observe.LogOption{observe.LogSubjects()}, `level=DEBUG msg="ratekit decision" outcome=denied policy=api quota=10 remaining=0 cost=1 latency=2ms subject=203.0.113.9` + "\n"},
	} {
		var buf bytes.Buffer
		l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: dropTime}))
		observe.Log(l, tc.opts...).Observe(context.Background(), e)
		if buf.String() != tc.want {
			t.Fatalf("got  %q\nwant %q", buf.String(), tc.want)
		}
	}
}

// TestLogLevel: records below the handler's level are not written; errors
// and fallbacks are.
func TestLogLevel(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: dropTime}))
	observe.Log(l).Observe(context.Background(), observe.Event{Policy: "api"})
	if buf.Len() != 0 {
		t.Fatalf("a debug record reached an info handler: %q", buf.String())
	}
	observe.Log(l, observe.LogLevel(slog.LevelWarn)).Observe(context.Background(),
		observe.Event{Outcome: observe.Error, Policy: "api", Fallback: true, Err: errors.New("boom")})
	if got := buf.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "outcome=error") ||
		!strings.Contains(got, "fallback=true") || !strings.Contains(got, "error=boom") {
		t.Fatalf("got %q", got)
	}
}

func TestOutcomeNames(t *testing.T) {
	for o, want := range map[observe.Outcome]string{observe.Allowed: "allowed", observe.Denied: "denied",
		observe.ShadowDenied: "shadow_denied", observe.Error: "error", observe.Invalid: "invalid", observe.Released: "released", 99: "unknown"} {
		if o.String() != want {
			t.Errorf("%d: %q, want %q", o, o.String(), want)
		}
	}
}

func TestNearLimit(t *testing.T) {
	for _, c := range []struct {
		e    observe.Event
		want bool
	}{
		{observe.Event{Quota: 10, Remaining: 2}, true},
		{observe.Event{Quota: 10, Remaining: 3}, false},
		{observe.Event{Quota: 10, Remaining: 0, Outcome: observe.Denied}, false},
		{observe.Event{}, false},
	} {
		if c.e.NearLimit() != c.want {
			t.Errorf("%+v: %v", c.e, !c.want)
		}
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestLogInFlight: an admission that took slots names them (held); their
// release is logged at the same level, as "ratekit released", without the
// decision's fields, and with the subject only under LogSubjects.
func TestLogInFlight(t *testing.T) {
	took := observe.Event{Policy: "conc", Quota: 2, Remaining: 1, Cost: 1, Latency: time.Millisecond,
		Held: "conc,tenant", Subject: "203.0.113.9"}
	back := observe.Event{Outcome: observe.Released, Policy: "conc,tenant", Held: "conc,tenant", Subject: "203.0.113.9"}
	for _, tc := range []struct {
		opts []observe.LogOption
		want string
	}{
		{[]observe.LogOption{observe.LogLevel(slog.LevelInfo)},
			`level=INFO msg="ratekit decision" outcome=allowed policy=conc quota=2 remaining=1 cost=1 latency=1ms held=conc,tenant` + "\n" +
				`level=INFO msg="ratekit released" outcome=released policy=conc,tenant held=conc,tenant` + "\n"},
		{[]observe.LogOption{observe.LogSubjects()},
			`level=DEBUG msg="ratekit decision" outcome=allowed policy=conc quota=2 remaining=1 cost=1 latency=1ms held=conc,tenant subject=203.0.113.9` + "\n" +
				`level=DEBUG msg="ratekit released" outcome=released policy=conc,tenant held=conc,tenant subject=203.0.113.9` + "\n"},
	} {
		var buf bytes.Buffer
		l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: dropTime}))
		obs := observe.Log(l, tc.opts...)
		obs.Observe(context.Background(), took)
		obs.Observe(context.Background(), back)
		if buf.String() != tc.want {
			t.Fatalf("got  %q\nwant %q", buf.String(), tc.want)
		}
	}
}

// TestHeldDelta: +1 for the admission that took slots (allowed or
// shadow_denied), -1 for their release, 0 without Held.
func TestHeldDelta(t *testing.T) {
	for _, c := range []struct {
		e    observe.Event
		want int64
	}{
		{observe.Event{Held: "conc"}, 1},
		{observe.Event{Outcome: observe.ShadowDenied, Held: "conc,all"}, 1},
		{observe.Event{Outcome: observe.Released, Held: "conc,all"}, -1},
		{observe.Event{Outcome: observe.Released}, 0},
		{observe.Event{Outcome: observe.Denied}, 0},
		{observe.Event{}, 0},
	} {
		if got := c.e.HeldDelta(); got != c.want {
			t.Errorf("%+v: %d, want %d", c.e, got, c.want)
		}
	}
}
