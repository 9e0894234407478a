// Package store is what a ratekit.Store implementer needs beside the Store
// interface itself: Combine to fold per-limit states into a Decision as
// every store does (Single for one), the checks a store applies to its
// arguments, and NonBlocking, which an in-process store implements. The
// kit's stores live below it: store/memstore (in-process), store/storetest
// (the conformance suite every store passes) and store/redisstore (Redis; a
// module of its own). See docs/architecture.md#the-store-contract in the
// repository.
package store
