// Package observe is ratekit's decision hook: every path that decides a
// request (ratekit.Middleware, the framework adapters, levels and lockouts)
// reports each decision to its Observers as an Event, and the release of
// InFlight slots, which is no decision, as an Event of outcome Released. Log
// writes decision logs through log/slog; observe/prometheus and observe/otel
// export metrics. See docs/operations.md#seeing-every-decision in the
// repository.
package observe
