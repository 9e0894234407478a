package ratekit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// TestReserveShadowOnly: a Limiter whose limits are all in shadow mode
// reserves as AllowN decides: it passes, recording what would have been
// refused, with nothing to settle.
func TestReserveShadowOnly(t *testing.T) {
	l := newLimiter(t, ratekit.FixedWindow(1, time.Hour).Shadow())
	for i, want := range []bool{false, true} {
		r, err := l.Reserve(context.Background(), "a", 1)
		if err != nil || !r.Decision.Allowed || r.Decision.ShadowDenied != want {
			t.Fatalf("call %d: %+v, %v; want a pass, ShadowDenied %v", i, r, err, want)
		}
		if err := r.Settle(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
}
