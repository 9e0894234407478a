// Package observe is ratekit's decision hook: every path that decides a
// request (ratekit.Middleware, the framework adapters, levels and lockouts)
// reports each decision to the Observers it was given, as an Event.
//
// A request admitted with InFlight slots (ratekit.InFlight) reports them
// in Event.Held, and reports them again, in an Event of outcome Released,
// when it gives them back or they lapse: a Released event is not a
// decision.
//
// Log writes decision logs through log/slog. The metrics modules
// github.com/ratekit/ratekit/observe/prometheus and
// github.com/ratekit/ratekit/observe/otel export counters, a latency
// histogram and the InFlight slots in use. An Event carries the subject it was about (an IP, an account),
// which is personal data: the kit never uses it as a metric label, and Log
// writes it only when asked to with LogSubjects.
package observe
