// Package ratekitprom exports ratekit's decisions as Prometheus metrics.
//
// New returns a *Metrics, both an observe.Observer (hand it to
// ratekit.WithObserver, an adapter's WithObserver or lockout.Config.Observer)
// and a prometheus.Collector; one Metrics can serve every path of a process.
// Its series, ratekit_decisions_total{policy,outcome} and the others listed
// in docs/operations.md#metrics in the repository, are labelled by the
// binding limit's name, never by subject. NewLeases exports the figures of
// lease stores (store/lease).
package ratekitprom
