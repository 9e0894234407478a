// Package ratekitotel exports ratekit's decisions as OpenTelemetry metrics.
//
// New returns a *Metrics, an observe.Observer: hand it to
// ratekit.WithObserver, an adapter's WithObserver or lockout.Config.Observer.
// One Metrics can serve every path of a process. It records on the
// MeterProvider of WithMeterProvider (by default the global one) under the
// scope ScopeName: ratekit.decisions by ratekit.policy and ratekit.outcome,
// ratekit.near_limit, ratekit.store.errors, ratekit.store.latency,
// ratekit.fallback.decisions, ratekit.fallback.active and
// ratekit.inflight.active_requests, as docs/operations.md#metrics describes
// in the repository. ratekit.policy is the binding limit's name (or a
// lockout's); a decision's subject is never an attribute.
package ratekitotel
