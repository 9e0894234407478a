// Package observe is ratekit's decision hook: every path that decides a
// request (ratekit.Middleware, the framework adapters, levels and lockouts)
// reports each decision to the Observers it was given, as an Event.
//
// Log writes decision logs through log/slog. The metrics modules
// github.com/ratekit/ratekit/observe/prometheus and
// github.com/ratekit/ratekit/observe/otel export counters and a latency
// histogram. An Event carries the subject it was about (an IP, an account),
// which is personal data: the kit never uses it as a metric label, and Log
// writes it only when asked to with LogSubjects.
package observe
