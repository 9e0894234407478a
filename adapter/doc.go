// Package adapter is for authors of framework adapters: it runs ratekit's
// request pipeline (the one behind ratekit.Middleware) for any framework, so
// that every framework answers with the same statuses, headers and bodies as
// net/http. The kit's Gin, Echo and Fiber adapters are built on it, each in
// a few dozen lines: a Guard for the Limiter, the framework's context as the
// type parameter of Option, and one Middleware function.
//
// Users of an existing adapter do not need this package.
package adapter
