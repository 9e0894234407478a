package store

import "github.com/ratekit/ratekit"

// NonBlocking is implemented by a ratekit.Store whose calls never wait on
// I/O, timers or other processes, only briefly for locks, as store/memstore's:
// ratekit.Middleware and the adapters call a store that reports true without
// a timeout context (WithTimeout), whose timer could never fire. A store that
// wraps another reports true only when every call it makes is non-blocking.
type NonBlocking interface {
	ratekit.Store
	// NonBlocking reports whether the store's calls never block.
	NonBlocking() bool
}
