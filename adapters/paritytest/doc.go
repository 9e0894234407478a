// Package paritytest holds the parity tests of the adapters: the same
// scripted requests through net/http, Gin, Echo, Fiber and gRPC must give
// the same answers, counts and metrics. It is its own module so that the
// adapters' modules never depend on each other's frameworks. See
// docs/testing.md in the repository.
package paritytest
