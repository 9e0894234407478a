// Package paritytest holds the parity test of the framework adapters: one
// scripted sequence of requests through net/http (ratekit.Middleware), Gin
// (ratekitgin), Echo (ratekitecho) and Fiber (ratekitfiber) must give
// identical status codes, headers and bodies. Every adapter is built with
// the one shape Middleware(limiter, key, opts...), its own key functions
// (ByIP, ByHeader) and its own options of ratekit's names (WithHeaderClock,
// WithErrorPolicy, WithErrorCode, WithRenderer, WithHeaders,
// WithErrorHandler, WithSkip, WithCostFunc, WithObserver, WithCountIf,
// WithSettle), each route group configured from one framework-neutral
// description. The same script, with a Prometheus observer
// (observe/prometheus), must leave identical metrics on every framework. A
// second script holds handlers open under an InFlight limit, answers
// statuses under WithCountIf and settles costs under WithSettle, and
// requires the same responses and the same counts everywhere. The gRPC
// interceptors (ratekitgrpc) answer the same sequence of calls, through a
// real gRPC server and client, with the same decisions, rate-limit fields,
// Retry-After and violated policies as net/http, and so does the in-flight,
// count-if and settle sequence (the gRPC handlers end calls with codes whose
// ratekitgrpc.HTTPStatus the net/http handlers answer); and 4 gRPC server
// instances on one real Redis admit exactly the quota of 500 concurrent
// calls. It is its own module so that the adapters' modules never depend on
// each other's frameworks, nor on a metrics client or a Redis client.
package paritytest
