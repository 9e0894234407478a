// Package ratekitgrpc puts ratekit's rate-limiting pipeline into gRPC
// servers and clients (google.golang.org/grpc).
//
// UnaryServerInterceptor(limiter, key, opts...) and
// StreamServerInterceptor(limiter, key, opts...) decide each call through
// ratekit.Guard, the pipeline behind ratekit.Middleware, so a call gets the
// same decision, retry time and policies as the same request over net/http:
//
//   - Admitted: the handler runs; the rate-limit fields of WithHeaders
//     (ratelimit and ratelimit-policy; x-ratelimit-limit, -remaining and
//     -reset) are sent as response header metadata.
//   - Denied: codes.ResourceExhausted, with the message of the HTTP body
//     and three details: google.rpc.RetryInfo (the exact time until the call
//     could pass, of which HTTP's Retry-After is the whole seconds rounded
//     up; absent when the call can never pass), google.rpc.QuotaFailure (one
//     violation per limit that refused: QuotaId its name, QuotaValue its
//     quota) and google.rpc.ErrorInfo (Reason RATE_LIMITED, or the code of
//     WithErrorCode; Domain "ratekit"; when InFlight limits alone refused,
//     Metadata quota_unit "concurrent-requests", as RateLimit-Policy's qu
//     parameter says, for its RetryInfo of 1 s foresees no free slot). The
//     rate-limit fields, retry-after (whole seconds) and
//     grpc-retry-pushback-ms go in the trailers, so the answer is a
//     trailers-only response that gRPC's own retry policies can act on in
//     every language.
//   - The store fails: WithErrorPolicy decides, as for HTTP. FailOpen (the
//     default) runs the handler without rate-limit metadata; FailClosed
//     answers codes.Unavailable with RetryInfo (1 s) and ErrorInfo
//     SERVICE_UNAVAILABLE. A store error is never ResourceExhausted, and its
//     text never reaches the client.
//   - No usable key or cost: codes.InvalidArgument under the default
//     WithKeyErrorPolicy (FailClosed), with nothing counted.
//
// Calls to the health service (grpc.health.v1.Health) and to server
// reflection are let through uncounted unless WithoutDefaultSkips; WithSkip
// adds a rule of your own.
//
// # Streams
//
// A stream is charged once when it opens, before the handler runs: a stream
// refused then never reaches the handler. With WithMessageCost(n), each
// message the handler receives is charged n more under the stream's key; a
// refused message makes RecvMsg return the ResourceExhausted status, which
// the handler returns to end the stream, and its trailers carry the
// rate-limit fields.
//
// # Lifecycle
//
// When the Limiter has InFlight limits (ratekit.InFlight), or WithSettle or
// WithCountIf is set, an admitted call is served as ratekit.Middleware
// serves a request: the handler's context carries the call's
// ratekit.Reservation (ratekit.ReservationFrom(ctx) in a unary handler,
// ratekit.ReservationFrom(ss.Context()) in a stream's), and once the handler
// returns the reservation is finished with the call's status. A call holds
// its InFlight slot from admission until its handler returns, a stream for
// its whole life, even when the client cancels or goes away before (a
// handler that honours its context returns early, and frees the slot then).
//
// WithCountIf takes an HTTP status, so that one function serves both
// transports: the handler's gRPC code is mapped as google.rpc.Code
// documents it (HTTPStatus: OK 200, NotFound 404, ResourceExhausted 429,
// Unavailable 503, Unknown and Internal 500, ...). An error that is no
// status counts as Unknown (500), a context error as Canceled (499) or
// DeadlineExceeded (504), as grpc-go sends them; a handler that panics
// counts as 500, and the panic goes on to the interceptors before this one
// (a recovery interceptor, or the process).
//
// Per-message charges (WithMessageCost) are plain charges: WithSettle and
// WithCountIf apply to a stream's opening charge, never to its messages,
// and a Limiter with InFlight limits cannot charge messages (building the
// interceptor with both panics): limit a stream's messages with a second
// interceptor over a Limiter of rate limits.
//
// # Keys
//
// A KeyFunc reads the call's context: ByIP keys by the peer address with
// ratekit's trust model (x-forwarded-for, forwarded or a header named by
// clientip.FromHeader is read from the metadata only when the peer is a
// trusted proxy), ByMetadata by a metadata value, ByMethod by the full
// method, ByPeerCertificate by the identity of a verified client
// certificate, and Join joins them. Any func(context.Context) (string,
// error) is a KeyFunc, so an identity an authentication interceptor put in
// the context keys calls as well.
//
// # Clients
//
// UnaryClientInterceptor and StreamClientInterceptor make a Go client
// honour RetryInfo: after a ResourceExhausted carrying it, a unary call is
// sent again once the advised time has passed, if that is within the call's
// deadline and WithMaxWait, and later calls and streams of the same method
// wait until then before they are sent at all, so the client does not send
// what the server has already said it would refuse. A refusal by InFlight
// limits alone holds back no other call: a slot comes back whenever any
// call ends.
//
// Interceptors are safe for concurrent use, like the Limiter they wrap. The
// Gin, Echo and Fiber adapters offer the same option names.
package ratekitgrpc
