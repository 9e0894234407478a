package ratekitgrpc

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
)

// serve runs handler, the rest of a call admitted with a Reservation (the
// Limiter has InFlight limits, or WithSettle or WithCountIf is set), as
// ratekit.Middleware serves a request: handler's context carries res, where
// ratekit.ReservationFrom finds it; once handler returns, res is finished
// with the HTTPStatus of its error's code (a panic counts as 500 and goes
// on) and the call's InFlight slots are released then, when handler
// returns, even if the call's context ended before.
func (s *server) serve(ctx context.Context, res *ratekit.Reservation, handler func(ctx context.Context) error) {
	report := func(err error) { s.cfg.Report(s.g, ctx, nil, err) }
	s.g.Run(ctx, res, report, func(ctx context.Context) int {
		return HTTPStatus(code(handler(ctx)))
	})
}

// code returns the code the client gets for a handler's error, as grpc-go
// makes it: the error's status, a context error's code, else Unknown.
func code(err error) codes.Code {
	if st, ok := status.FromError(err); ok {
		return st.Code()
	}
	return status.FromContextError(err).Code()
}

// HTTPStatus returns the HTTP status of a gRPC code, the one a
// WithCountIf function receives for a call that ended with c. The mapping
// is the one google.rpc.Code documents (googleapis, google/rpc/code.proto),
// which grpc-gateway follows too: OK 200, Canceled 499, InvalidArgument,
// FailedPrecondition and OutOfRange 400, Unauthenticated 401,
// PermissionDenied 403, NotFound 404, AlreadyExists and Aborted 409,
// ResourceExhausted 429, Unimplemented 501, Unavailable 503,
// DeadlineExceeded 504; Unknown, Internal, DataLoss and any other code 500.
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.Canceled:
		return 499 // the client closed the request; no constant in net/http
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// reservedStream is a ServerStream whose context carries the stream's
// Reservation.
type reservedStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the stream's context with its Reservation.
func (r *reservedStream) Context() context.Context { return r.ctx }
