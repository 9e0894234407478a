// Package observe is ratekit's decision hook: every path that decides a
// request (ratekit.Middleware, the framework adapters, levels and lockouts)
// reports each decision to its Observers as an Event. A request admitted with
// InFlight slots reports them again, in an Event of outcome Released, when it
// gives them back: that is no decision. Log writes decision logs through
// log/slog; observe/prometheus and observe/otel export metrics. An Event's
// subject (an IP, an account) is personal data: the kit never uses it as a
// metric label, and Log writes it only with LogSubjects. See
// docs/operations.md#seeing-every-decision in the repository.
package observe
