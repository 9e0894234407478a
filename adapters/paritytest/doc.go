// Package paritytest holds the parity test of the framework adapters: one
// scripted sequence of requests through net/http (ratekit.Middleware), Gin
// (ratekitgin), Echo (ratekitecho) and Fiber (ratekitfiber) must give
// identical status codes, headers and bodies. It is its own module so that
// the adapters' modules never depend on each other's frameworks.
package paritytest
