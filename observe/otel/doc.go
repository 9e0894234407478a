// Package ratekitotel exports ratekit's decisions as OpenTelemetry metrics.
//
// New returns a *Metrics, an observe.Observer: hand it to
// ratekit.WithObserver, an adapter's WithObserver or lockout.Config.Observer.
// It records through the OpenTelemetry metric API on the MeterProvider given
// with WithMeterProvider, by default the global one (otel.GetMeterProvider),
// under the instrumentation scope ScopeName. One Metrics can serve every
// limiter, adapter and lockout of a process; the data points are told apart
// by their ratekit.policy attribute.
//
// The instruments:
//
//	ratekit.decisions           Int64Counter {decision}: one per decision, with
//	                            ratekit.policy and ratekit.outcome (allowed, denied,
//	                            shadow_denied, error, invalid)
//	ratekit.near_limit          Int64Counter {decision}: allowed decisions whose binding
//	                            limit has at most a fifth of its quota left
//	ratekit.store.errors        Int64Counter {error}: decisions the store failed to make
//	ratekit.fallback.decisions  Int64Counter {decision}: decisions made by a fallback store
//	ratekit.fallback.active     Int64ObservableGauge {state}: 1 when the latest decision
//	                            made by a store came from a fallback store, else 0
//	ratekit.store.latency       Float64Histogram s: the store's answer time, for every
//	                            decision that asked a store (errors included)
//	ratekit.inflight.active_requests
//	                            Int64UpDownCounter {request}: requests of this instance
//	                            holding a slot of an InFlight limit, with ratekit.policy
//	                            (the InFlight limit's name)
//
// ratekit.fallback.active is one for the whole Metrics, not one per
// policy: it tells the source of the latest decision made by a store on
// any path given this Metrics, so that a dashboard shows when the kit runs
// on its fallback store. A store error or an invalid request decides
// nothing and leaves it as it was.
//
// ratekit.inflight.active_requests is an UpDownCounter, the instrument the
// semantic conventions use for values in use, after
// http.server.active_requests and ASP.NET Core's
// aspnetcore.rate_limiting.active_request_leases (requests holding a
// rate-limiting lease): a data point reads the requests holding a slot of
// its limit now. It moves with observe.Event.HeldDelta: +1 for each
// InFlight limit (ratekit.InFlight) whose slot a request took when it was
// admitted, -1 when the request gives it back, as its handler ends, or the
// slot lapses. Those Released events are no decisions: they are recorded on
// no other instrument. It is this instance's share: the slots held across
// instances are the sum over instances.
//
// The near-limit counter follows envoy's ratelimit service, which counts the
// requests that pass while a limit is at least 80% used: alert on it to
// learn that a client is about to be refused before it is.
//
// The ratekit.policy attribute is the binding limit's name
// (ratekit.Limit.Named), or a lockout's name; decisions that reached no
// store (error, invalid) carry the names of all the call's limits, joined by
// commas. Policy names come from configuration, so the number of attribute
// sets is bounded. The subject of a decision (an IP, an account) is personal
// data and is never an attribute.
package ratekitotel
