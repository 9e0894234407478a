package ratekitgin_test

import (
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	ratekitgin "github.com/ratekit/ratekit/adapters/gin"
	"github.com/ratekit/ratekit/store/memstore"
)

// Limit a Gin route to 2 requests per minute per client IP (the socket peer;
// see clientip.TrustProxies for load balancers).
func ExampleMiddleware() {
	gin.SetMode(gin.ReleaseMode)
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	r := gin.New()
	r.GET("/hello", ratekitgin.Middleware(limiter, ratekitgin.ByIP()), func(c *gin.Context) {
		c.String(200, "hello")
	})

	for range 3 {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", "/hello", nil)) // from 192.0.2.1
		fmt.Printf("%d %s retry-after=%q\n", rec.Code, rec.Header().Get("RateLimit"), rec.Header().Get("Retry-After"))
	}
	// Output:
	// 200 "api";r=1;t=60 retry-after=""
	// 200 "api";r=0;t=60 retry-after=""
	// 429 "api";r=0;t=60 retry-after="60"
}

// Key by the user an authentication middleware stored in the context, and
// answer 503 rather than let requests through when the store fails.
func ExampleMiddleware_userKey() {
	gin.SetMode(gin.ReleaseMode)
	limiter, _ := ratekit.New(memstore.New(), ratekit.GCRA(10, time.Second, 5).Named("user"))
	r := gin.New()
	r.Use(func(c *gin.Context) { c.Set("user", "alice") }) // your authentication
	r.Use(ratekitgin.Middleware(limiter,
		func(c *gin.Context) (string, error) { return c.GetString("user"), nil },
		ratekitgin.WithErrorPolicy(ratekit.FailClosed),
		ratekitgin.WithSkip(func(c *gin.Context) bool { return c.FullPath() == "/healthz" }),
	))
	r.GET("/api", func(c *gin.Context) { c.String(200, "ok") })

	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/api", nil))
	fmt.Println(rec.Code, rec.Header().Get("RateLimit"))
	// Output: 200 "user";r=4;t=1
}
