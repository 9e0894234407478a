package store

import "github.com/ratekit/ratekit"

// NonBlocking is implemented by a ratekit.Store whose calls never wait on
// I/O, timers or other processes: each returns after its own work, having
// waited at most for a lock that other calls hold as briefly. store/memstore
// is one. ratekit.Middleware and the framework adapters call a store that
// reports true without a timeout context (WithTimeout), which would cost a
// timer and several allocations per request for a deadline that cannot be
// reached; every other store's calls stay bounded by the timeout.
//
// A store that wraps another (a fallback, a cache) reports true only when
// every call it makes is non-blocking; a store that may reach the network
// never does.
type NonBlocking interface {
	ratekit.Store
	// NonBlocking reports whether the store's calls never block.
	NonBlocking() bool
}
