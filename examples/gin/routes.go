package main

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	ratekitgin "github.com/ratekit/ratekit/adapters/gin"
	"github.com/ratekit/ratekit/store/memstore"
)

// newRouter builds the example's routes over one in-process store.
func newRouter(quota int64, window time.Duration) (http.Handler, error) {
	store := memstore.New()
	api, err := ratekit.New(store, ratekit.FixedWindow(quota, window).Named("api"))
	if err != nil {
		return nil, err
	}
	login, err := ratekit.New(store, ratekit.FixedWindow(5, 15*time.Minute).Named("login"))
	if err != nil {
		return nil, err
	}

	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })

	g := r.Group("/api", ratekitgin.Middleware(api, ratekitgin.ByIP()))
	g.GET("/hello", func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"hello": "world", "remaining": c.Writer.Header().Get("X-RateLimit-Remaining")})
	})

	r.POST("/login", ratekitgin.Middleware(login, ratekitgin.ByIP(),
		ratekitgin.WithErrorCode(ratekit.CodeTooManyAttempts), ratekitgin.WithErrorPolicy(ratekit.FailClosed)),
		func(c *gin.Context) { c.JSON(http.StatusUnauthorized, gin.H{"error": "invalid credentials"}) })
	return r, nil
}
