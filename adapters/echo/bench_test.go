package ratekitecho_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
	ratekitecho "github.com/ratekit/ratekit/adapters/echo"
	"github.com/ratekit/ratekit/store/memstore"
)

// discard is a ResponseWriter that keeps nothing but its header map.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkOverhead measures the adapter's cost: an Echo instance with a
// no-op handler, without and with the middleware (memstore, 10,000 client
// IPs, all allowed, legacy and IETF headers), and with an InFlight limit,
// whose slot each request takes and releases (two store calls).
func BenchmarkOverhead(b *testing.B) {
	reqs := make([]*http.Request, 10_000)
	for i := range reqs {
		reqs[i] = httptest.NewRequest("GET", "/", nil)
		reqs[i].RemoteAddr = "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255) + ":1234"
	}
	for _, bc := range []struct {
		name  string
		limit []ratekit.Limit // none: no middleware
	}{
		{"bare", nil},
		{"ratekit", []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}},
		{"inflight", []ratekit.Limit{ratekit.InFlight(100)}}, // a slot taken and released per request
	} {
		withMW := bc.limit != nil
		b.Run(bc.name, func(b *testing.B) {
			e := echo.New()
			if withMW {
				l, err := ratekit.New(memstore.New(), bc.limit...)
				if err != nil {
					b.Fatal(err)
				}
				e.Use(ratekitecho.Middleware(l, ratekitecho.ByIP()))
			}
			e.GET("/", func(echo.Context) error { return nil })
			if rec := serve(e, "/", "10.0.0.1:1", nil); rec.Code != 200 || withMW != (rec.Header().Get("RateLimit") != "") {
				b.Fatalf("setup: %d %v", rec.Code, rec.Header())
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				w := &discard{h: http.Header{}}
				i := 0
				for pb.Next() {
					clear(w.h)
					e.ServeHTTP(w, reqs[i%len(reqs)])
					i++
				}
			})
		})
	}
}
