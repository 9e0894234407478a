// Package store is what a ratekit.Store implementer needs beside the Store
// interface itself: Combine to fold per-limit states into a Decision as
// every store does (Single for one), the checks a store applies to its
// arguments, Settler and NonBlocking. The kit's stores live below it, with
// store/storetest, the conformance suite every store passes. See
// docs/architecture.md#the-store-contract in the repository.
package store
