// Package ratekitotel exports ratekit's decisions as OpenTelemetry metrics.
//
// New returns a *Metrics, an observe.Observer: hand it to
// ratekit.WithObserver, an adapter's WithObserver or lockout.Config.Observer.
// One Metrics can serve every path of a process. It records on the
// MeterProvider of WithMeterProvider (by default the global one) under the
// scope ScopeName: ratekit.decisions by ratekit.policy and ratekit.outcome,
// and the others listed in docs/operations.md#metrics in the repository. A
// decision's subject is never an attribute.
package ratekitotel
