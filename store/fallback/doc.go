// Package fallback is a ratekit.Store that keeps deciding while the shared
// store (Redis) is down: it asks a primary store and, when the primary fails,
// decides in a local one (memstore) with each limit scaled to one instance's
// share, behind a circuit breaker. Where the error policies would let
// requests through unlimited or refuse them, every request is still limited,
// approximately, and none fails because of the store.
//
// A call the primary fails is decided locally in the same call, with
// Decision.Fallback set; Config.Failures failures in a row open the breaker,
// and every call then goes to the local store until a background probe (at
// most one per Config.Retry) finds the primary back. Errors of the request
// itself, and the caller's own cancellation, are returned as they are. Each
// instance's share divides quotas, bursts, capacities and rates by
// Config.Instances (a quota at least 1); the primary's counts and blocks are
// not seen locally. A Store is a store.Settler, so lockouts may run over it.
// See docs/architecture.md#fallback-store-storefallback in the repository.
package fallback
