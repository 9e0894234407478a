// Package ratekitotel exports ratekit's decisions as OpenTelemetry metrics.
//
// New returns a *Metrics, an observe.Observer for ratekit.WithObserver, an
// adapter's WithObserver or lockout.Config.Observer; one Metrics can serve
// every path of a process. It records on the MeterProvider of
// WithMeterProvider (by default the global one), under the scope ScopeName,
// the instruments docs/operations.md#metrics lists in the repository; a
// decision's subject is never an attribute.
package ratekitotel
