package ratekit_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// countingStore fails the test if any call reaches it.
type countingStore struct{ calls int }

func (s *countingStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (s *countingStore) Take(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	s.calls++
	return ratekit.Decision{}, nil
}
func (s *countingStore) Peek(context.Context, string, []ratekit.Limit) (ratekit.Decision, error) {
	s.calls++
	return ratekit.Decision{}, nil
}
func (s *countingStore) Reset(context.Context, string, []ratekit.Limit) error { s.calls++; return nil }

func TestBadLimits(t *testing.T) {
	cases := []struct {
		name  string
		limit ratekit.Limit
		field string
	}{
		{"zero value", ratekit.Limit{}, "algorithm"},
		{"quota 0", ratekit.FixedWindow(0, time.Minute), "quota"},
		{"quota negative", ratekit.FixedWindow(-1, time.Minute), "quota"},
		{"quota 2^53", ratekit.FixedWindow(1<<53, time.Minute), "quota"},
		{"window 0", ratekit.FixedWindow(1, 0), "window"},
		{"window negative", ratekit.FixedWindow(1, -time.Second), "window"},
		{"window below 1ms", ratekit.FixedWindow(1, 999*time.Microsecond), "window"},
		{"window fraction of ms", ratekit.FixedWindow(1, 1500*time.Microsecond), "window"},
		{"window too long", ratekit.FixedWindow(1, 367*24*time.Hour), "window"},
		{"rate 0", ratekit.GCRA(0, time.Second, 1), "rate"},
		{"rate negative", ratekit.GCRA(-1, time.Second, 1), "rate"},
		{"rate NaN", ratekit.GCRA(math.NaN(), time.Second, 1), "rate"},
		{"rate +Inf", ratekit.GCRA(math.Inf(1), time.Second, 1), "rate"},
		{"rate -Inf", ratekit.GCRA(math.Inf(-1), time.Second, 1), "rate"},
		{"rate above 1/µs", ratekit.GCRA(2e6, time.Second, 1), "rate"},
		{"period below 1ms", ratekit.GCRA(1, time.Microsecond, 1), "period"},
		{"burst 0", ratekit.GCRA(1, time.Second, 0), "burst"},
		{"burst negative", ratekit.GCRA(1, time.Second, -3), "burst"},
		{"burst horizon too long", ratekit.GCRA(1, time.Hour, 10_000), "burst"},
		{"empty name", ratekit.FixedWindow(1, time.Second).Named(""), "name"},
		{"name with brace", ratekit.FixedWindow(1, time.Second).Named("a{b}"), "name"},
		{"name with quote", ratekit.FixedWindow(1, time.Second).Named(`a"b`), "name"},
		{"name too long", ratekit.FixedWindow(1, time.Second).Named(strings.Repeat("n", 49)), "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &countingStore{}
			_, err := ratekit.New(store, tc.limit)
			var le *ratekit.LimitError
			if !errors.As(err, &le) || !errors.Is(err, ratekit.ErrInvalidLimit) {
				t.Fatalf("New: %v, want a *LimitError", err)
			}
			if le.Field != tc.field || !strings.HasPrefix(err.Error(), "ratekit: ") {
				t.Fatalf("error %q names field %q, want %q", err, le.Field, tc.field)
			}
			if store.calls != 0 {
				t.Fatalf("%d store calls", store.calls)
			}
		})
	}
}

// The limits whose count is bounded below 2^53 (InFlight's slots and
// SlidingLog's quota, at most 10,000) state that range, whichever side n
// misses it on.
func TestBoundedCountReasons(t *testing.T) {
	cases := []struct {
		limit         ratekit.Limit
		field, reason string
	}{
		{ratekit.InFlight(0), "slots", "must be between 1 and 10000 for an in-flight limit (got 0)"},
		{ratekit.InFlight(-1), "slots", "must be between 1 and 10000 for an in-flight limit (got -1)"},
		{ratekit.InFlight(10_001), "slots", "must be between 1 and 10000 for an in-flight limit (got 10001)"},
		{ratekit.SlidingLog(0, time.Minute), "quota", "must be between 1 and 10000 for a sliding log (got 0)"},
		{ratekit.SlidingLog(-1, time.Minute), "quota", "must be between 1 and 10000 for a sliding log (got -1)"},
		{ratekit.SlidingLog(10_001, time.Minute), "quota", "must be between 1 and 10000 for a sliding log (got 10001)"},
	}
	for _, tc := range cases {
		_, err := ratekit.New(&countingStore{}, tc.limit)
		var le *ratekit.LimitError
		if !errors.As(err, &le) || le.Field != tc.field || le.Reason != tc.reason {
			t.Errorf("%v: %v, want %s %s", tc.limit, err, tc.field, tc.reason)
		}
	}
	for _, l := range []ratekit.Limit{ratekit.InFlight(10_000), ratekit.SlidingLog(10_000, time.Minute)} {
		if _, err := ratekit.New(memstore.New(), l); err != nil {
			t.Errorf("%v: %v", l, err)
		}
	}
}

func TestBadLimiterConfig(t *testing.T) {
	store := &countingStore{}
	if _, err := ratekit.New(nil, ratekit.FixedWindow(1, time.Second)); !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Errorf("nil store: %v", err)
	}
	if _, err := ratekit.New(store); !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Errorf("no limits: %v", err)
	}
	_, err := ratekit.New(store, ratekit.FixedWindow(1, time.Second), ratekit.FixedWindow(5, time.Minute))
	if !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Errorf("two limits named alike: %v", err)
	}
	if _, err := ratekit.New(store, ratekit.FixedWindow(1, time.Second), ratekit.FixedWindow(5, time.Minute).Named("long")); err != nil {
		t.Errorf("named apart: %v", err)
	}
}

func TestBadCalls(t *testing.T) {
	store := &countingStore{}
	l, err := ratekit.New(store, ratekit.GCRA(10, time.Second, 5))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, cost := range []int64{-1, math.MinInt64, 1 << 53, math.MaxInt64} {
		if _, err := l.AllowN(ctx, "k", cost); !errors.Is(err, ratekit.ErrInvalidCost) {
			t.Errorf("cost %d: %v, want ErrInvalidCost", cost, err)
		}
	}
	if _, err := l.Allow(ctx, ""); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Errorf("empty key: %v", err)
	}
	if _, err := l.Peek(ctx, ""); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Errorf("empty key peek: %v", err)
	}
	if err := l.Reset(ctx, ""); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Errorf("empty key reset: %v", err)
	}
	if store.calls != 0 {
		t.Fatalf("%d store calls", store.calls)
	}
	if _, err := l.AllowN(ctx, "k", 1<<53-1); err != nil || store.calls != 1 {
		t.Fatalf("cost 2^53-1: %v, %d calls", err, store.calls)
	}
}

func TestFingerprint(t *testing.T) {
	a := ratekit.FixedWindow(100, time.Minute)
	if a.Fingerprint() != ratekit.FixedWindow(100, time.Minute).Named("x").Fingerprint() {
		t.Error("the name changed the fingerprint")
	}
	for _, b := range []ratekit.Limit{ratekit.FixedWindow(101, time.Minute), ratekit.FixedWindow(100, time.Hour), ratekit.GCRA(100, time.Minute, 100)} {
		if a.Fingerprint() == b.Fingerprint() {
			t.Errorf("%v and %v share a fingerprint", a, b)
		}
	}
}

func TestCustomLimitParams(t *testing.T) {
	if err := ratekit.Custom("mine", 1, time.Second, [3]int64{1 << 53, 0, 0}).Validate(); !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Errorf("param 2^53: %v", err)
	}
	if err := ratekit.Custom("mine", 1, time.Second, [3]int64{1<<53 - 2, -5, 0}).Validate(); err != nil {
		t.Errorf("params in range: %v", err)
	}
}
