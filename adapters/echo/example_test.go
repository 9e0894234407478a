package ratekitecho_test

import (
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
	ratekitecho "github.com/ratekit/ratekit/adapters/echo"
	"github.com/ratekit/ratekit/store/memstore"
)

// Limit an Echo route to 2 requests per minute per client IP (the socket
// peer; see clientip.TrustProxies for load balancers).
func ExampleMiddleware() {
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.GET("/hello", func(c echo.Context) error { return c.String(200, "hello") },
		ratekitecho.Middleware(limiter, ratekitecho.ByIP()))

	for range 3 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("GET", "/hello", nil)) // from 192.0.2.1
		fmt.Printf("%d %s retry-after=%q\n", rec.Code, rec.Header().Get("RateLimit"), rec.Header().Get("Retry-After"))
	}
	// Output:
	// 200 "api";r=1;t=60 retry-after=""
	// 200 "api";r=0;t=60 retry-after=""
	// 429 "api";r=0;t=60 retry-after="60"
}

// Skip health checks, charge uploads 5, and hand denials to Echo's
// HTTPErrorHandler as *echo.HTTPError.
func ExampleMiddleware_returnError() {
	limiter, _ := ratekit.New(memstore.New(), ratekit.GCRA(10, time.Second, 5).Named("api"))
	e := echo.New()
	e.Use(ratekitecho.Middleware(limiter, ratekitecho.ByIP(),
		ratekitecho.WithSkip(func(c echo.Context) bool { return c.Path() == "/healthz" }),
		ratekitecho.WithCostFunc(func(c echo.Context) int64 {
			if c.Request().Method == "POST" {
				return 5
			}
			return 1
		}),
		ratekitecho.WithReturnError(),
	))
	e.POST("/upload", func(c echo.Context) error { return c.NoContent(204) })

	var rec *httptest.ResponseRecorder
	for range 2 {
		rec = httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("POST", "/upload", nil))
		fmt.Println(rec.Code)
	}
	fmt.Print(rec.Body) // written by Echo's DefaultHTTPErrorHandler
	// Output:
	// 204
	// 429
	// {"status":429,"code":"RATE_LIMITED","message":"Too many requests. Try again in 1 second.","context":{"retryAfter":1,"limit":10,"remaining":0,"policy":"api"}}
}
