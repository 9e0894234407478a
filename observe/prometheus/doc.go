// Package ratekitprom exports ratekit's decisions as Prometheus metrics.
//
// New returns a *Metrics, both an observe.Observer (for ratekit.WithObserver,
// an adapter's WithObserver or lockout.Config.Observer) and a
// prometheus.Collector; one Metrics can serve every path of a process. Its
// series, listed in docs/operations.md#metrics in the repository, are
// labelled by policy, never by subject. NewLeases exports the figures of
// lease stores (store/lease).
package ratekitprom
