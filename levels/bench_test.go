package levels_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/levels"
	"github.com/ratekit/ratekit/store/memstore"
)

// BenchmarkLevels measures an admitted request through a global and a
// per-tenant limit (memstore, no reputation): two decisions.
func BenchmarkLevels(b *testing.B) {
	mw, err := levels.New(levels.Config{
		Store:     memstore.New(),
		Tenant:    ratekit.ByHeader("X-Tenant"),
		Global:    []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour).Named("global")},
		PerTenant: []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour).Named("tenant")},
	})
	if err != nil {
		b.Fatal(err)
	}
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	req := httptest.NewRequest("GET", "/items", nil)
	req.Header.Set("X-Tenant", "alice")
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// discardWriter is an http.ResponseWriter that keeps only its headers.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}
