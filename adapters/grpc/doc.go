// Package ratekitgrpc puts ratekit's rate-limiting pipeline into gRPC servers
// and clients (google.golang.org/grpc).
//
// UnaryServerInterceptor(limiter, key, opts...) and StreamServerInterceptor
// decide each call through ratekit.Guard, so a call gets the decision, retry
// time and policies of the same request over net/http:
//
//   - Admitted: the handler runs; the rate-limit fields are header metadata.
//   - Denied: codes.ResourceExhausted with RetryInfo, QuotaFailure and
//     ErrorInfo details, and the rate-limit fields, retry-after and
//     grpc-retry-pushback-ms as trailers, for gRPC's own retry policies.
//   - The store fails: FailOpen (the default) runs the handler, FailClosed
//     answers codes.Unavailable; the store's error never reaches the client.
//   - No usable key or cost: codes.InvalidArgument, nothing counted.
//
// Health and reflection calls pass uncounted unless WithoutDefaultSkips. A
// stream is charged when it opens, and with WithMessageCost per message.
//
// UnaryClientInterceptor and StreamClientInterceptor make a Go client honour
// RetryInfo. Interceptors are safe for concurrent use. See
// docs/architecture.md#grpc in the repository.
package ratekitgrpc
