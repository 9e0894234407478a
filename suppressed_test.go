package ratekit_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

func TestSuppressedValidate(t *testing.T) {
	if err := ratekit.Suppressed(100, time.Second, 1.5).Validate(); err != nil {
		t.Fatalf("valid limit: %v", err)
	}
	if err := ratekit.Suppressed(100, time.Second, 1).Precision(100 * time.Millisecond).Validate(); err != nil {
		t.Fatalf("the default precision restated: %v", err)
	}
	cases := []struct {
		name  string
		limit ratekit.Limit
		field string
	}{
		{"soft 0", ratekit.Suppressed(0, time.Second, 2), "soft limit"},
		{"window 0", ratekit.Suppressed(10, 0, 2), "window"},
		{"window fraction of ms", ratekit.Suppressed(10, 1500*time.Microsecond, 2), "window"},
		{"factor below 1", ratekit.Suppressed(10, time.Second, 0.99), "factor"},
		{"factor NaN", ratekit.Suppressed(10, time.Second, math.NaN()), "factor"},
		{"factor +Inf", ratekit.Suppressed(10, time.Second, math.Inf(1)), "factor"},
		{"hard × width ≥ 2^53", ratekit.Suppressed(1<<40, time.Hour, 2), "factor"},
		{"other precision", ratekit.Suppressed(10, time.Second, 2).Precision(10 * time.Millisecond), "precision"},
		{"queue", ratekit.Suppressed(10, time.Second, 2).Queue(time.Second), "queue"},
	}
	for _, c := range cases {
		err := c.limit.Validate()
		var le *ratekit.LimitError
		if !errors.As(err, &le) || le.Field != c.field || !errors.Is(err, ratekit.ErrInvalidLimit) || !strings.HasPrefix(err.Error(), "ratekit: ") {
			t.Errorf("%s: %v, want a LimitError on %q", c.name, err, c.field)
		}
	}
}

func TestSuppressedLimit(t *testing.T) {
	l := ratekit.Suppressed(100, time.Minute, 1.5)
	if l.Spec().Hard != 150 || l.Spec().Factor != 1.5 || l.Spec().Quota != 100 || l.Spec().Precision != 6*time.Second || l.Spec().Algorithm != "suppressed" {
		t.Fatalf("%v: hard %d factor %v burst %d width %v", l, l.Spec().Hard, l.Spec().Factor, l.Spec().Quota, l.Spec().Precision)
	}
	if got := l.String(); got != "suppressed: suppressed 100 per 1m0s, hard 150" {
		t.Fatalf("String() = %q", got)
	}
	if ratekit.Suppressed(7, time.Second, 1.3).Spec().Hard != 9 || ratekit.FixedWindow(7, time.Second).Spec().Hard != 0 {
		t.Fatal("Hard is floor(soft × factor), and 0 for other algorithms")
	}
	if l.Fingerprint() == ratekit.Suppressed(100, time.Minute, 1.6).Fingerprint() {
		t.Fatal("a new factor must start fresh state")
	}
	if q, w := ratekit.PolicyQuota(l); q != 100 || w != 60 {
		t.Fatalf("policy %d per %d s, want the soft limit, 100 per 60", q, w)
	}
	if err := store.CheckAlgorithmName("suppressed"); err == nil {
		t.Fatal("suppressed is built in")
	}
}

func TestDrawBits(t *testing.T) {
	cases := []struct {
		u    float64
		want int64
	}{
		{0, 0}, {0.5, 1 << 52}, {1 - 0x1p-53, 1<<53 - 1}, {1, 1<<53 - 1}, {7, 1<<53 - 1},
		{-0.5, 0}, {math.NaN(), 0}, {0x1p-53, 1}, {0x1p-60, 0},
	}
	for _, c := range cases {
		if got := store.DrawBits(c.u); got != c.want {
			t.Errorf("DrawBits(%v) = %d, want %d", c.u, got, c.want)
		}
	}
}

func TestCombineSuppression(t *testing.T) {
	d := store.Combine([]ratekit.LimitState{
		{Allowed: true, Remaining: 5, Suppression: 0.25},
		{Allowed: true, Remaining: 9},
		{Allowed: true, Remaining: 7, Suppression: 0.5},
	})
	if d.Suppression != 0.5 {
		t.Fatalf("Suppression %v, want the largest, 0.5", d.Suppression)
	}
}
