package ratekit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestNewReportsEveryBadLimit: three bad limits give three *LimitErrors in
// one error, each naming its field, and the good limit none.
func TestNewReportsEveryBadLimit(t *testing.T) {
	_, err := ratekit.New(memstore.New(),
		ratekit.FixedWindow(0, time.Minute).Named("a"),
		ratekit.GCRA(10, time.Second, 5).Named("fine"),
		ratekit.GCRA(0, time.Second, 5).Named("b"),
		ratekit.SlidingLog(5, 0).Named("c"))
	if !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Fatalf("New: %v", err)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 3 {
		t.Fatalf("New: %v, want 3 errors joined", err)
	}
	for i, want := range []string{`"a": quota`, `"b": rate`, `"c": window`} {
		part := joined.Unwrap()[i]
		var le *ratekit.LimitError
		if !errors.As(part, &le) || !strings.Contains(part.Error(), want) || strings.Count(part.Error(), "ratekit: ") != 1 {
			t.Errorf("error %d: %q, want one *LimitError about %s with one prefix", i, part, want)
		}
	}
}

// TestStateIsNameAndAlgorithm: a limit's counters are identified by its
// name and algorithm, not its numbers, as Named documents. Limiters whose
// limits agree in both share one counter per subject (an unnamed limit is
// named after its algorithm); another name is another counter, and so are
// other numbers under carry.Reset.
func TestStateIsNameAndAlgorithm(t *testing.T) {
	store := memstore.New()
	limiter := func(l ratekit.Limit) *ratekit.Limiter {
		t.Helper()
		lim, err := ratekit.New(store, l)
		if err != nil {
			t.Fatal(err)
		}
		return lim
	}
	mux := http.NewServeMux()
	for path, l := range map[string]ratekit.Limit{
		"/unnamed-a": ratekit.FixedWindow(2, time.Minute),
		"/unnamed-b": ratekit.FixedWindow(2, time.Minute),
		"/search":    ratekit.FixedWindow(2, time.Minute).Named("search"),
		"/other":     ratekit.FixedWindow(3, time.Minute),
		"/reset":     ratekit.FixedWindow(3, time.Minute).Carry(carry.Reset),
		"/shared-a":  ratekit.FixedWindow(2, time.Minute).Named("shared"),
		"/shared-b":  ratekit.FixedWindow(2, time.Minute).Named("shared"),
	} {
		mux.Handle(path, ratekit.Middleware(limiter(l), ratekit.ByIP())(ok))
	}
	codes := func(paths ...string) (out []int) {
		for _, p := range paths {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
			out = append(out, rec.Code)
		}
		return out
	}
	for _, c := range []struct {
		paths []string
		want  []int
		why   string
	}{
		{[]string{"/unnamed-a", "/unnamed-b", "/unnamed-a"}, []int{200, 200, 429}, "unnamed, equal parameters: one counter"},
		{[]string{"/search", "/search", "/search"}, []int{200, 200, 429}, "named apart: a counter of its own"},
		{[]string{"/other", "/other"}, []int{200, 429}, "unnamed, other numbers: the same counter (2 used, quota 3)"},
		{[]string{"/reset", "/reset", "/reset", "/reset"}, []int{200, 200, 200, 429}, "carry.Reset, other numbers: a counter of its own"},
		{[]string{"/shared-a", "/shared-b", "/shared-a"}, []int{200, 200, 429}, "named alike: one counter"},
	} {
		if got := codes(c.paths...); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.why, got, c.want)
		}
	}
}

// TestReloadKeepsCounts: a configuration reload builds the new Limiter
// while the old one still serves; both work, and the new one continues the
// old one's counts.
func TestReloadKeepsCounts(t *testing.T) {
	store := memstore.New()
	limits := func() []ratekit.Limit {
		return []ratekit.Limit{ratekit.TokenBucket(1, time.Minute, 3), ratekit.FixedWindow(10, time.Hour)}
	}
	old, err := ratekit.New(store, limits()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		if d, err := old.Allow(ctx, "alice"); err != nil || !d.Allowed {
			t.Fatalf("old Limiter: %+v, %v", d, err)
		}
	}
	reloaded, err := ratekit.New(store, limits()...)
	if err != nil {
		t.Fatalf("New while the old Limiter is alive: %v", err)
	}
	if d, err := reloaded.Allow(ctx, "alice"); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Fatalf("reloaded Limiter, third request: %+v, %v; want allowed with 0 left (the old counts kept)", d, err)
	}
	if d, err := old.Allow(ctx, "alice"); err != nil || d.Allowed {
		t.Fatalf("old Limiter, fourth request: %+v, %v; want denied (one bucket for both)", d, err)
	}
}
