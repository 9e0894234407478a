// Package ratekitprom exports ratekit's decisions as Prometheus metrics.
//
// New returns a *Metrics, which is both an observe.Observer (hand it to
// ratekit.WithObserver, an adapter's WithObserver or lockout.Config.Observer)
// and a prometheus.Collector (register it with your registry). One Metrics
// can serve every path of a process. Its series, with the default namespace
// "ratekit": ratekit_decisions_total{policy,outcome},
// ratekit_near_limit_total, ratekit_store_errors_total,
// ratekit_store_latency_seconds, ratekit_fallback_decisions_total,
// ratekit_fallback_active and ratekit_inflight, as
// docs/operations.md#metrics describes in the repository. The policy label
// is the binding limit's name (or a lockout's); a decision's subject is never
// a label. NewLeases exports the figures of lease stores (store/lease).
package ratekitprom
