package ratekitgrpc

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
)

// serve runs handler, the rest of a call admitted with a Reservation, as
// ratekit.Middleware serves a request: handler's context carries res, and
// res is finished with the HTTPStatus of the code the client gets (a panic
// counts as 500 and goes on) once handler returns, even if the call's
// context ended before.
func (s *server) serve(ctx context.Context, res *ratekit.Reservation, handler func(ctx context.Context) error) {
	report := func(err error) { s.cfg.Report(s.g, ctx, nil, err) }
	s.g.Run(ctx, res, report, func(ctx context.Context) int {
		err := handler(ctx)
		st, ok := status.FromError(err) // as grpc-go sends it: a context error is its code, else Unknown
		if !ok {
			st = status.FromContextError(err)
		}
		return HTTPStatus(st.Code())
	})
}

// HTTPStatus returns the HTTP status of a gRPC code, the one a WithCountIf
// function receives for a call that ended with c: the mapping google.rpc.Code
// documents, which grpc-gateway follows too (OK 200, InvalidArgument 400,
// NotFound 404, ResourceExhausted 429, Unavailable 503, Unknown and any code
// it does not name 500, ...).
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
