package ratekitfiber_test

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ratekit/ratekit"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
	"github.com/ratekit/ratekit/store/memstore"
)

// BenchmarkOverhead measures the adapter's cost: a Fiber app with a no-op
// handler, without and with the middleware (memstore, 10,000 client IPs,
// all allowed, legacy and IETF headers), and with an InFlight limit, whose
// slot each request takes and releases (two store calls), driven through its fasthttp handler.
func BenchmarkOverhead(b *testing.B) {
	peers := make([]net.Addr, 10_000)
	for i := range peers {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		peers[i] = net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, 1234))
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
			app := fiber.New()
			if withMW {
				l, err := ratekit.New(memstore.New(), bc.limit...)
				if err != nil {
					b.Fatal(err)
				}
				app.Use(ratekitfiber.Middleware(l, ratekitfiber.ByIP()))
			}
			app.Get("/", func(*fiber.Ctx) error { return nil })
			if r := do(app, "/", "10.0.0.1:1", nil); r.status != 200 || withMW != (r.header.Get("RateLimit") != "") {
				b.Fatalf("setup: %d %v", r.status, r.header)
			}
			h := app.Handler()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var req fasthttp.Request
				req.Header.SetMethod("GET")
				req.SetRequestURI("/")
				ctx := new(fasthttp.RequestCtx)
				ctx.Init(&req, nil, nil)
				i := 0
				for pb.Next() {
					ctx.Response.Reset()
					ctx.SetRemoteAddr(peers[i%len(peers)])
					h(ctx)
					i++
				}
			})
		})
	}
}
