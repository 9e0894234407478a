package main

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/ratekit/ratekit"
	ratekitfiber "github.com/ratekit/ratekit/adapters/fiber"
	"github.com/ratekit/ratekit/store/memstore"
)

// newApp builds the example's routes over one in-process store.
func newApp(quota int64, window time.Duration) (*fiber.App, error) {
	store := memstore.New()
	api, err := ratekit.New(store, ratekit.FixedWindow(quota, window).Named("api"))
	if err != nil {
		return nil, err
	}
	login, err := ratekit.New(store, ratekit.FixedWindow(5, 15*time.Minute).Named("login"))
	if err != nil {
		return nil, err
	}

	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(recover.New())
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })

	g := app.Group("/api", ratekitfiber.Middleware(api, ratekitfiber.ByIP()))
	g.Get("/hello", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"hello": "world", "remaining": c.GetRespHeader("X-RateLimit-Remaining")})
	})

	app.Post("/login", ratekitfiber.Middleware(login, ratekitfiber.ByIP(),
		ratekitfiber.WithErrorCode(ratekit.CodeTooManyAttempts), ratekitfiber.WithErrorPolicy(ratekit.FailClosed)),
		func(c *fiber.Ctx) error {
			return c.Status(fiber.StatusUnauthorized).JSON(fiber.Map{"error": "invalid credentials"})
		})
	return app, nil
}
