package ratekitotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestLockout: a lockout reports each Attempt and Check under its name.
// Three attempts of three pass (the third leaves 0: near limit), the fourth
// trips the block and the fifth meets it; a Check during the block is a
// denial; Reset and Refund are not decisions; an empty key is invalid.
func TestLockout(t *testing.T) {
	m, reader := newMetrics(t)
	lo, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Observer: m, Windows: []lockout.Window{
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
	if err := lo.Refund(ctx, "carol", d.Attempt); err != nil {
		t.Fatal(err)
	}
	if err := lo.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := lo.Attempt(ctx, ""); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
	check(t, reader, want(0, policy("login", counts{allowed: 4, denied: 3, invalid: 1, near: 1, latency: 7})))
}
