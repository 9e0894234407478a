package denycache_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
	"github.com/ratekit/ratekit/store/denycache"
)

// overriding is a counting store that holds overrides: its inner store's.
type overriding struct {
	*counting
	store.Overrider
}

func (s overriding) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return s.counting.Prepare(limits)
}

// TestOverrideDropsCachedDenials: an override set or cleared through a
// Limiter on the cache drops this instance's cached denials of the
// subject, so the next call asks the store and is decided on the numbers
// now in force; other subjects' denials stay cached, and so do those of
// another instance's cache, until their Retry-After (as documented).
func TestOverrideDropsCachedDenials(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	inner := overriding{f.inner, f.inner.Store.(store.Overrider)}
	f.cache = denycache.New(inner, denycache.WithClock(f.clock.Now), denycache.WithMargin(0))
	other := denycache.New(inner, denycache.WithClock(f.clock.Now), denycache.WithMargin(0))
	l := ratekit.FixedWindow(2, time.Hour).Named("api")
	a, err := ratekit.New(f.cache, l)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ratekit.New(other, l)
	if err != nil {
		t.Fatal(err)
	}
	allow := func(lim *ratekit.Limiter, key string) ratekit.Decision {
		t.Helper()
		d, err := lim.Allow(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, key := range []string{"k", "j"} {
		f.deny(t, key, l)
		f.cached(t, key, 1, l)
	}
	if d := allow(b, "k"); d.Allowed || d.Cached {
		t.Fatalf("the other instance's first call: %+v; want the store's denial", d)
	}
	if d := allow(b, "k"); d.Allowed || !d.Cached {
		t.Fatalf("the other instance's second call: %+v; want its cached denial", d)
	}

	if err := a.Override(ctx, "k", ratekit.FixedWindow(4, time.Hour).Named("api"), 0); err != nil {
		t.Fatal(err)
	}
	before := f.inner.calls()
	d := allow(a, "k")
	if !d.Allowed || d.Cached || d.Remaining != 1 || d.Limit.Spec().Quota != 4 || f.inner.calls() != before+1 {
		t.Fatalf("k after the override to 4, 2 used: %+v, %d store calls; want the store asked, allowed, 1 left of 4", d, f.inner.calls()-before)
	}
	f.cached(t, "j", 1, l) // another subject's denial stands
	if d := allow(b, "k"); d.Allowed || !d.Cached || d.Limit.Spec().Quota != 2 {
		t.Fatalf("the other instance after the override: %+v; want its cached denial (until its Retry-After)", d)
	}

	// a denial under the override is cached with the numbers in force
	allow(a, "k")
	if d := allow(a, "k"); d.Allowed || d.Cached || d.Limit.Spec().Quota != 4 {
		t.Fatalf("k past the override's 4: %+v; want the store's denial under 4", d)
	}
	if d := f.cached(t, "k", 1, l); d.Limit.Spec().Quota != 4 {
		t.Fatalf("k's cached denial: %+v; want the numbers in force (4)", d)
	}
	if err := a.ClearOverride(ctx, "k", "api"); err != nil {
		t.Fatal(err)
	}
	before = f.inner.calls()
	if d := allow(a, "k"); d.Allowed || d.Cached || d.Limit.Spec() != l.Spec() || f.inner.calls() != before+1 {
		t.Fatalf("k once cleared: %+v, %d store calls; want the store's denial under the own 2", d, f.inner.calls()-before)
	}
}
