// Package fallback is a ratekit.Store that keeps deciding while the shared
// store (Redis) is down: it asks a primary store and, when the primary fails,
// decides in a local one (memstore) with each limit scaled to one instance's
// share (Config.Instances, Limit.Share), behind a circuit breaker. Every
// request is still limited, approximately, and none fails because of the
// store.
//
// A call the primary fails is decided locally, with Decision.Fallback set;
// Config.Failures failures in a row open the breaker, and calls then go to
// the local store until a background probe finds the primary back. Errors
// of the request itself, and the caller's cancellation, are returned as
// they are. A Store is a store.Settler, so lockouts may run over it. See
// docs/architecture.md#fallback-store-storefallback in the repository.
package fallback
