// Package adapter is for authors of framework adapters: generic options and
// key functions over a framework's context type, on top of ratekit.Guard,
// the request pipeline behind ratekit.Middleware, so that every framework
// answers with the same statuses, headers and bodies as net/http. The kit's
// Gin, Echo and Fiber adapters are built on it, each in a few dozen lines:
// a ratekit.Guard for the Limiter (NewGuard), the framework's context as the
// type parameter of Option, and one Middleware function, which hands a
// request that holds a ratekit.Reservation (InFlight limits, WithSettle,
// WithCountIf) to Serve.
//
// Users of an existing adapter do not need this package.
package adapter
