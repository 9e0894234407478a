package ratekit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
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

// TestUnnamedLimitsDoNotShareByAccident: two Limiters, one per route, each
// with an unnamed FixedWindow(2, time.Minute) on one store would share one
// counter (the second route's first request would be a 429); New refuses
// the second. Named limits, the same unnamed limit on another store, and
// one Limiter on two routes are fine.
func TestUnnamedLimitsDoNotShareByAccident(t *testing.T) {
	store := memstore.New()
	a, err := ratekit.New(store, ratekit.FixedWindow(2, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ratekit.New(store, ratekit.FixedWindow(2, time.Minute))
	var le *ratekit.LimitError
	if !errors.As(err, &le) || le.Field != "name" || !strings.Contains(err.Error(), "Named") {
		t.Fatalf("second Limiter with the same unnamed limit: %v, want a *LimitError saying to use Named", err)
	}
	if _, err := ratekit.New(store, ratekit.FixedWindow(2, time.Minute).Named("b")); err != nil {
		t.Fatalf("named apart: %v", err)
	}
	if _, err := ratekit.New(store, ratekit.FixedWindow(3, time.Minute)); err != nil {
		t.Fatalf("another unnamed limit (other parameters, other counter): %v", err)
	}
	if _, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute)); err != nil {
		t.Fatalf("the same unnamed limit on another store: %v", err)
	}

	// named alike on purpose: they share, and say so in their counts
	x, _ := ratekit.New(store, ratekit.FixedWindow(2, time.Minute).Named("shared"))
	y, err := ratekit.New(store, ratekit.FixedWindow(2, time.Minute).Named("shared"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/a", ratekit.Middleware(x, ratekit.ByIP())(ok))
	mux.Handle("/b", ratekit.Middleware(y, ratekit.ByIP())(ok))
	mux.Handle("/c", ratekit.Middleware(a, ratekit.ByIP())(ok))
	mux.Handle("/d", ratekit.Middleware(a, ratekit.ByIP())(ok))
	codes := func(paths ...string) (out []int) {
		for _, p := range paths {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
			out = append(out, rec.Code)
		}
		return out
	}
	if got := codes("/a", "/b", "/a"); got[0] != 200 || got[1] != 200 || got[2] != 429 {
		t.Fatalf("limits named alike on purpose: %v, want 200 200 429 (one counter)", got)
	}
	if got := codes("/c", "/d", "/c"); got[0] != 200 || got[1] != 200 || got[2] != 429 {
		t.Fatalf("one Limiter on two routes: %v, want 200 200 429 (one counter)", got)
	}
	runtime.KeepAlive(a)
}

// TestClaimEndsWithLimiter: once the first Limiter is unreachable, a new one
// may use the same unnamed limit at once, as a reloaded configuration does,
// whether or not the collector has run since.
func TestClaimEndsWithLimiter(t *testing.T) {
	store := memstore.New()
	for i := range 20 {
		if _, err := ratekit.New(store, ratekit.TokenBucket(1, time.Second, 3)); err != nil {
			t.Fatalf("Limiter %d, the previous one unreachable: %v", i+1, err)
		}
	}
}
