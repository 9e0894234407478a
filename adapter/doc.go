// Package adapter is for authors of framework adapters: generic options and
// key functions over a framework's context type, on top of ratekit.Guard, so
// that every framework answers with the statuses, headers and bodies of
// net/http. The kit's Gin, Echo and Fiber adapters are a few dozen lines each:
// NewGuard for the Limiter, the framework's context as Option's type
// parameter, and one Middleware function. Users of an existing adapter do not
// need this package. See docs/architecture.md#framework-adapters in the
// repository.
package adapter
