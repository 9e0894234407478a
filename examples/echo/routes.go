package main

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratekit/ratekit"
	ratekitecho "github.com/ratekit/ratekit/adapters/echo"
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

	e := echo.New()
	e.HideBanner = true
	e.Use(middleware.Recover())
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })

	g := e.Group("/api", ratekitecho.Middleware(api, ratekitecho.ByIP()))
	g.GET("/hello", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"hello": "world", "remaining": c.Response().Header().Get("X-RateLimit-Remaining")})
	})

	e.POST("/login", func(c echo.Context) error {
		return c.JSON(http.StatusUnauthorized, map[string]string{"error": "invalid credentials"})
	}, ratekitecho.Middleware(login, ratekitecho.ByIP(),
		ratekitecho.WithErrorCode(ratekit.CodeTooManyAttempts), ratekitecho.WithErrorPolicy(ratekit.FailClosed)))
	return e, nil
}
