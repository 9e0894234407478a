package ratekitgrpc

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
)

// UnaryServerInterceptor returns a gRPC unary server interceptor that counts
// each call against l under the subject key names, e.g. ByIP(). An admitted
// call runs the handler with the rate-limit fields as header metadata; a
// refused one gets the status described in the package documentation and
// the handler does not run.
//
// It panics if l or key is nil or an option is invalid: that is a
// programming error found when the server is built, never at call time.
func UnaryServerInterceptor(l *ratekit.Limiter, key KeyFunc, opts ...Option) grpc.UnaryServerInterceptor {
	s := newServer("UnaryServerInterceptor", l, key, opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if s.skip(ctx, info.FullMethod) {
			return handler(ctx, req)
		}
		k, kerr := s.key(ctx)
		md, err := s.check(ctx, k, kerr, s.cfg.CostOf(ctx))
		if err != nil {
			_ = grpc.SetTrailer(ctx, md)
			return nil, err
		}
		if md != nil {
			_ = grpc.SetHeader(ctx, md)
		}
		return handler(ctx, req)
	}
}

// StreamServerInterceptor returns a gRPC stream server interceptor that
// counts each stream against l under the subject key names when it opens,
// before the handler runs, and with WithMessageCost each message the
// handler receives. An admitted stream runs the handler with the rate-limit
// fields as header metadata; a refused one gets the status described in the
// package documentation and the handler does not run.
//
// It panics if l or key is nil or an option is invalid: that is a
// programming error found when the server is built, never at call time.
func StreamServerInterceptor(l *ratekit.Limiter, key KeyFunc, opts ...Option) grpc.StreamServerInterceptor {
	s := newServer("StreamServerInterceptor", l, key, opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := ss.Context()
		if s.skip(ctx, info.FullMethod) {
			return handler(srv, ss)
		}
		k, kerr := s.key(ctx)
		md, err := s.check(ctx, k, kerr, s.cfg.CostOf(ctx))
		if err != nil {
			ss.SetTrailer(md)
			return err
		}
		if md != nil {
			_ = ss.SetHeader(md)
		}
		if s.messageCost > 0 && kerr == nil {
			ss = &meteredStream{ServerStream: ss, s: s, key: k}
		}
		// The stream holds nothing past this point; a slot that a
		// decision holds while the call runs is released when handler
		// returns, here.
		return handler(srv, ss)
	}
}

// server is one interceptor's pipeline: the Guard of its Limiter and
// options, its key function and what only gRPC has.
type server struct {
	g           *ratekit.Guard
	cfg         *adapter.Config[context.Context]
	key         KeyFunc
	allMethods  bool
	messageCost int64
}

func newServer(name string, l *ratekit.Limiter, key KeyFunc, opts []Option) *server {
	if l == nil || key == nil {
		panic("ratekit: ratekitgrpc." + name + " needs a Limiter and a KeyFunc")
	}
	c := newConfig(opts)
	if c.messageCost < 0 {
		panic("ratekit: ratekitgrpc.WithMessageCost needs a cost of 0 or more")
	}
	cfg := adapter.NewConfig(c.adapter)
	return &server{g: adapter.NewGuard(l, cfg), cfg: cfg, key: key, allMethods: c.allMethods, messageCost: c.messageCost}
}

// skip reports whether the call goes through uncounted: a default skip or
// WithSkip.
func (s *server) skip(ctx context.Context, method string) bool {
	if !s.allMethods && skippedByDefault(method) {
		return true
	}
	return s.cfg.Skip != nil && s.cfg.Skip(ctx)
}

// skippedByDefault reports the methods of the health and reflection
// services.
func skippedByDefault(method string) bool {
	return strings.HasPrefix(method, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(method, "/grpc.reflection.v1.ServerReflection/") ||
		strings.HasPrefix(method, "/grpc.reflection.v1alpha.ServerReflection/")
}

// check decides one call (or message) and reports an error the policies
// handled. It returns the metadata to send, as headers when err is nil and
// as trailers otherwise, and the status error of a refusal.
func (s *server) check(ctx context.Context, key string, keyErr error, cost int64) (metadata.MD, error) {
	var fields mdFields
	v := s.g.Check(ctx, key, keyErr, cost, &fields)
	if v.Err != nil {
		if s.cfg.OnError != nil {
			s.cfg.OnError(ctx, v.Err)
		} else {
			s.g.Report(nil, v.Err)
		}
	}
	if v.Pass {
		return fields.metadata(), nil
	}
	return refusal(v, &fields)
}

// meteredStream charges each message its handler receives.
type meteredStream struct {
	grpc.ServerStream
	s   *server
	key string
}

// RecvMsg receives a message and charges it; a refused message is the
// refusal's status error.
func (m *meteredStream) RecvMsg(msg any) error {
	if err := m.ServerStream.RecvMsg(msg); err != nil {
		return err
	}
	md, err := m.s.check(m.ServerStream.Context(), m.key, nil, m.s.messageCost)
	if err == nil {
		return nil // an admitted message sends no fields: the headers may be gone
	}
	m.ServerStream.SetTrailer(md)
	return err
}
