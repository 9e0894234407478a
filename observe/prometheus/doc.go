// Package ratekitprom exports ratekit's decisions as Prometheus metrics.
//
// New returns a *Metrics, which is both an observe.Observer (hand it to
// ratekit.WithObserver, an adapter's WithObserver or lockout.Config.Observer)
// and a prometheus.Collector (register it with your registry). One Metrics
// can serve every limiter, adapter and lockout of a process; the series are
// told apart by their policy label.
//
// The series, with the default namespace "ratekit":
//
//	ratekit_decisions_total{policy,outcome}   counter: one per decision; outcome is
//	                                          allowed, denied, shadow_denied, error or invalid
//	ratekit_near_limit_total{policy}          counter: allowed decisions whose binding limit
//	                                          has at most a fifth of its quota left
//	ratekit_store_errors_total{policy}        counter: decisions the store failed to make
//	ratekit_fallback_decisions_total{policy}  counter: decisions made by a fallback store
//	ratekit_fallback_active                   gauge: 1 when the latest decision made by a
//	                                          store came from a fallback store, else 0
//	ratekit_store_latency_seconds{policy}     histogram: the store's answer time, for every
//	                                          decision that asked a store (errors included)
//	ratekit_inflight{policy}                  gauge: slots of InFlight limits held by requests
//	                                          of this instance, by the InFlight limit's name
//
// ratekit_fallback_active is one for the whole Metrics, not one per
// policy: it tells the source of the latest decision made by a store on
// any path given this Metrics, so that a dashboard shows when the kit runs
// on its fallback store. A store error or an invalid request decides
// nothing and leaves it as it was.
//
// ratekit_inflight moves with observe.Event.HeldDelta: +1 for each
// InFlight limit (ratekit.InFlight) whose slot a request took when it was
// admitted, -1 when the request gives it back, as its handler ends, or the
// slot lapses. Those Released events are no decisions: they count in no
// other series. The gauge is this instance's share: the slots held across
// instances (the limit's state in Redis) are the sum over instances, and a
// series stays, at 0, once its slots are back.
//
// NewLeases exports the figures of lease stores (store/lease): leases and
// units taken, lapsed and dropped, and units held, per store.
//
// The near-limit counter follows envoy's ratelimit service, which counts the
// requests that pass while a limit is at least 80% used: alert on it to
// learn that a client is about to be refused before it is.
//
// The policy label is the binding limit's name (ratekit.Limit.Named), or a
// lockout's name; decisions that reached no store (error, invalid) carry the
// names of all the call's limits, joined by commas. Policy names come from
// configuration, so the number of series is bounded. The subject of a
// decision (an IP, an account) is personal data and is never a label.
package ratekitprom
