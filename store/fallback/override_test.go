package fallback_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// TestOverrideGoesToThePrimary: an override set through a Limiter on the
// fallback store is held by the primary, which every instance reads: a
// Limiter on the primary alone sees it, in its list and its decisions,
// and the local store holds none; clearing it clears the primary's.
func TestOverrideGoesToThePrimary(t *testing.T) {
	ctx := context.Background()
	c := storetest.NewClock(time.Unix(1_700_000_000, 0))
	primary, local := memstore.New(memstore.WithClock(c.Now)), memstore.New(memstore.WithClock(c.Now))
	s, err := fallback.New(primary, local, fallback.Config{Instances: 4})
	if err != nil {
		t.Fatal(err)
	}
	l := ratekit.FixedWindow(100, time.Hour).Named("api")
	newLimiter := func(s ratekit.Store) *ratekit.Limiter {
		lim, err := ratekit.New(s, l)
		if err != nil {
			t.Fatal(err)
		}
		return lim
	}
	lim, onPrimary, onLocal := newLimiter(s), newLimiter(primary), newLimiter(local)
	if err := lim.Override(ctx, "k", ratekit.FixedWindow(200, time.Hour).Named("api"), time.Hour); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]*ratekit.Limiter{"fallback": lim, "primary": onPrimary} {
		os, err := l.Overrides(ctx, "")
		if err != nil || len(os) != 1 || os[0].Subject != "k" || os[0].Limit.Spec().Quota != 200 || os[0].Expires.IsZero() {
			t.Fatalf("Overrides through the %s: %+v, %v; want k's api of 200, timed", name, os, err)
		}
	}
	if os, err := onLocal.Overrides(ctx, ""); err != nil || len(os) != 0 {
		t.Fatalf("the local store's overrides: %+v, %v; want none", os, err)
	}
	d, err := onPrimary.Allow(ctx, "k")
	if err != nil || d.Limit.Spec().Quota != 200 || d.Remaining != 199 {
		t.Fatalf("a decision on the primary: %+v, %v; want the override's 200 in force", d, err)
	}
	d, err = lim.Allow(ctx, "k")
	if err != nil || d.Fallback || d.Limit.Spec().Quota != 200 || d.Remaining != 198 {
		t.Fatalf("a decision through the fallback store: %+v, %v; want the primary's, 200 in force", d, err)
	}
	if err := lim.ClearOverride(ctx, "k", ""); err != nil {
		t.Fatal(err)
	}
	if os, err := onPrimary.Overrides(ctx, ""); err != nil || len(os) != 0 {
		t.Fatalf("the primary's overrides once cleared: %+v, %v; want none", os, err)
	}
	if d, err := lim.Allow(ctx, "k"); err != nil || d.Limit.Spec() != l.Spec() || d.Remaining != 97 {
		t.Fatalf("a decision once cleared: %+v, %v; want the own 100, 97 left", d, err)
	}
}

// TestOverrideWithoutAnOverridingPrimary: over a primary that holds no
// overrides, Override fails (ErrInvalidLimit) and nothing is written, in
// the local store either.
func TestOverrideWithoutAnOverridingPrimary(t *testing.T) {
	ctx := context.Background()
	c := storetest.NewClock(time.Unix(1_700_000_000, 0))
	local := memstore.New(memstore.WithClock(c.Now))
	p := &primary{inner: memstore.New(memstore.WithClock(c.Now))}
	s, err := fallback.NewWithClock(p, local, fallback.Config{}, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	l := ratekit.FixedWindow(100, time.Hour).Named("api")
	lim, err := ratekit.New(s, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := lim.Override(ctx, "k", ratekit.FixedWindow(200, time.Hour).Named("api"), 0); !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Fatalf("Override over a primary without overrides: %v; want ErrInvalidLimit", err)
	}
	if _, err := lim.Overrides(ctx, ""); !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Fatalf("Overrides over a primary without overrides: %v; want ErrInvalidLimit", err)
	}
	onLocal, err := ratekit.New(local, l)
	if err != nil {
		t.Fatal(err)
	}
	if os, err := onLocal.Overrides(ctx, ""); err != nil || len(os) != 0 {
		t.Fatalf("the local store's overrides: %+v, %v; want none", os, err)
	}
	if d, err := lim.Allow(ctx, "k"); err != nil || d.Limit.Spec() != l.Spec() {
		t.Fatalf("a decision: %+v, %v; want the own limit", d, err)
	}
}
