// Package reputation keeps a score per tenant (an account, an API key, an
// IP): violations lower it, good requests and quiet time raise it, and the
// state expires on its own. Package levels uses it to let well-behaved
// tenants through while a global limit is exceeded.
//
// Both of the kit's stores implement Store: the Redis store in one Lua script
// per update, store/memstore with the same arithmetic, bit for bit. See
// docs/architecture.md#reputation-and-levels in the repository.
package reputation
