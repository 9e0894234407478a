package ratekitfiber_test

import (
	"fmt"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ratekit/ratekit"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/store/memstore"
)

// Limit a Fiber route to 2 requests per minute per client IP. app.Test
// serves the requests without a listener.
func ExampleMiddleware() {
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	app := fiber.New()
	app.Get("/hello", ratekitfiber.Middleware(limiter, ratekitfiber.ByIP()), func(c *fiber.Ctx) error {
		return c.SendString("hello")
	})

	for range 3 {
		res, err := app.Test(httptest.NewRequest("GET", "/hello", nil), -1)
		if err != nil {
			panic(err)
		}
		res.Body.Close()
		fmt.Printf("%d %s retry-after=%q\n", res.StatusCode, res.Header.Get("RateLimit"), res.Header.Get("Retry-After"))
	}
	// Output:
	// 200 "api";r=1;t=60 retry-after=""
	// 200 "api";r=0;t=60 retry-after=""
	// 429 "api";r=0;t=60 retry-after="60"
}

// Behind a load balancer at 10.0.0.0/8, key by the client address it
// forwards, read right to left from every X-Forwarded-For line; skip health
// checks and charge uploads 5.
func ExampleByIP() {
	limiter, _ := ratekit.New(memstore.New(), ratekit.GCRA(10, time.Second, 10).Named("api"))
	app := fiber.New()
	app.Use(ratekitfiber.Middleware(limiter,
		ratekitfiber.ByIP(clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))),
		ratekitfiber.WithSkip(func(c *fiber.Ctx) bool { return c.Path() == "/healthz" }),
		ratekitfiber.WithCostFunc(func(c *fiber.Ctx) int64 {
			if c.Method() == fiber.MethodPost {
				return 5
			}
			return 1
		}),
	))
	app.Post("/upload", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })

	res, _ := app.Test(httptest.NewRequest("POST", "/upload", nil), -1)
	fmt.Println(res.StatusCode, res.Header.Get("RateLimit"))
	// Output: 204 "api";r=5;t=1
}
