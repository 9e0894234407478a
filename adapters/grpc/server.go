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

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
)

// UnaryServerInterceptor returns a gRPC unary server interceptor that counts
// each call against l under the subject key names, e.g. ByIP(), and answers
// as the package documentation describes. With InFlight limits, WithSettle
// or WithCountIf, the handler's context carries the call's
// ratekit.Reservation, finished once the handler returns. It panics if l or
// key is nil or an option is invalid, when the server is built.
func UnaryServerInterceptor(l *ratekit.Limiter, key KeyFunc, opts ...Option) grpc.UnaryServerInterceptor {
	s := newServer("UnaryServerInterceptor", l, key, opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if s.skip(ctx, info.FullMethod) {
			return handler(ctx, req)
		}
		k, kerr := s.key(ctx)
		md, res, err := s.check(ctx, s.g, k, kerr, s.cfg.CostOf(ctx))
		if err != nil {
			_ = grpc.SetTrailer(ctx, md)
			return nil, err
		}
		if len(md) > 0 {
			_ = grpc.SetHeader(ctx, md)
		}
		if res == nil {
			return handler(ctx, req)
		}
		var resp any
		s.serve(ctx, res, func(ctx context.Context) error {
			resp, err = handler(ctx, req)
			return err
		})
		return resp, err
	}
}

// StreamServerInterceptor returns a gRPC stream server interceptor that
// counts each stream as UnaryServerInterceptor counts a call, when it opens,
// and with WithMessageCost each message the handler receives. An admitted
// stream holds its InFlight slot and its Reservation, found in
// ss.Context(), until the handler returns. It panics as
// UnaryServerInterceptor does, and for WithMessageCost on a Limiter with
// InFlight limits.
func StreamServerInterceptor(l *ratekit.Limiter, key KeyFunc, opts ...Option) grpc.StreamServerInterceptor {
	s := newServer("StreamServerInterceptor", l, key, opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := ss.Context()
		if s.skip(ctx, info.FullMethod) {
			return handler(srv, ss)
		}
		k, kerr := s.key(ctx)
		md, res, err := s.check(ctx, s.g, k, kerr, s.cfg.CostOf(ctx))
		if err != nil {
			ss.SetTrailer(md)
			return err
		}
		if len(md) > 0 {
			_ = ss.SetHeader(md)
		}
		if s.msg != nil && kerr == nil {
			ss = &meteredStream{ServerStream: ss, s: s, key: k}
		}
		if res == nil {
			return handler(srv, ss)
		}
		s.serve(ctx, res, func(ctx context.Context) error {
			err = handler(srv, &reservedStream{ServerStream: ss, ctx: ctx})
			return err
		})
		return err
	}
}

// server is one interceptor's pipeline: its options, the Guard of its
// Limiter and options, and its key function.
type server struct {
	adapter     []adapter.Option[context.Context]
	life        []ratekit.Option // WithSettle, WithCountIf: not for per-message charges
	allMethods  bool             // WithoutDefaultSkips
	messageCost int64            // WithMessageCost; 0: messages are not charged

	g   *ratekit.Guard
	msg *ratekit.Guard // per-message charges (WithMessageCost); nil when none
	cfg *adapter.Config[context.Context]
	key KeyFunc
}

func newServer(name string, l *ratekit.Limiter, key KeyFunc, opts []Option) *server {
	if l == nil || key == nil {
		panic("ratekit: ratekitgrpc." + name + " needs a Limiter and a KeyFunc")
	}
	s := &server{key: key}
	for _, o := range opts {
		if o != nil {
			o.apply(s)
		}
	}
	if s.messageCost < 0 {
		panic("ratekit: ratekitgrpc.WithMessageCost needs a cost of 0 or more")
	}
	s.cfg = adapter.NewConfig(append(s.adapter, adapter.Core[context.Context](s.life...)))
	s.g = adapter.NewGuard(l, s.cfg)
	if s.messageCost > 0 && name == "StreamServerInterceptor" {
		// the same options but WithSettle and WithCountIf: plain charges,
		// unless the Limiter has InFlight limits
		s.msg = adapter.NewGuard(l, adapter.NewConfig(s.adapter))
		if s.msg.Reserving() {
			panic("ratekit: ratekitgrpc.WithMessageCost charges each message plainly, which a Limiter with an InFlight limit cannot do; " +
				"charge messages with a second StreamServerInterceptor over a Limiter without InFlight limits")
		}
	}
	return s
}

// skip reports whether the call goes through uncounted: the health and
// reflection services unless WithoutDefaultSkips, and WithSkip.
func (s *server) skip(ctx context.Context, method string) bool {
	if !s.allMethods && (strings.HasPrefix(method, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(method, "/grpc.reflection.v1.ServerReflection/") ||
		strings.HasPrefix(method, "/grpc.reflection.v1alpha.ServerReflection/")) {
		return true
	}
	return s.cfg.Skip != nil && s.cfg.Skip(ctx)
}

// check decides one call (or message) through g and reports an error the
// policies handled. It returns the metadata to send, as headers when err is
// nil and as trailers otherwise, the Reservation to finish when the call
// passed and g reserves, and the status error of a refusal.
func (s *server) check(ctx context.Context, g *ratekit.Guard, key string, keyErr error, cost int64) (metadata.MD, *ratekit.Reservation, error) {
	var fields mdFields
	v := g.Check(ctx, key, keyErr, cost, &fields)
	if v.Err != nil {
		s.cfg.Report(g, ctx, nil, v.Err)
	}
	var err error
	if !v.Pass {
		err = refusal(v, &fields)
	}
	return fields.metadata(), v.Reservation, err
}

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

// reservedStream is a ServerStream whose context carries the stream's
// Reservation.
type reservedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (r *reservedStream) Context() context.Context { return r.ctx }

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
	// An admitted message sends no fields: the headers may be gone.
	md, _, err := m.s.check(m.ServerStream.Context(), m.s.msg, m.key, nil, m.s.messageCost)
	if err != nil {
		m.ServerStream.SetTrailer(md)
	}
	return err
}

// A KeyFunc names the subject a call is counted against, from the call's
// context. An empty key or an error goes to the key error policy
// (InvalidArgument by default); it never falls into one shared bucket.
type KeyFunc func(ctx context.Context) (string, error)

// ByIP keys calls by the client's IP address as ratekit.ByIP does, with its
// options and trust model: by default the peer's address, never metadata;
// with clientip.TrustProxies or clientip.TrustHops, every x-forwarded-for
// value, read right to left (clientip.FromForwarded and clientip.FromHeader
// read those fields instead). IPv6 addresses are grouped by /64. A peer
// that is not an IP address (a Unix socket) is a key error. ByIP panics if
// opts are invalid, when the server is built.
func ByIP(opts ...clientip.Option) KeyFunc {
	ip, err := clientip.New(opts...)
	if err != nil {
		panic(err)
	}
	return func(ctx context.Context) (string, error) {
		p, ok := peer.FromContext(ctx)
		if !ok || p.Addr == nil {
			return "", errNoPeer
		}
		var addr string
		if a, ok := p.Addr.(*net.TCPAddr); ok {
			addr = a.IP.String() // the bare IP: no port to format and parse again
		} else {
			addr = p.Addr.String() // which the resolver rejects
		}
		return ip.KeyOf(addr, func(name string) []string { return metadata.ValueFromIncomingContext(ctx, name) })
	}
}

var errNoPeer = fmt.Errorf("%w: the call has no peer address", ratekit.ErrEmptyKey)

// ByMetadata keys calls by the first value of metadata field name (e.g.
// "x-api-key"; names are case-insensitive), as ratekit.ByHeader does for
// HTTP. A missing or empty value is ratekit.ErrEmptyKey.
func ByMetadata(name string) KeyFunc {
	return func(ctx context.Context) (string, error) {
		if v := metadata.ValueFromIncomingContext(ctx, name); len(v) > 0 && v[0] != "" {
			return v[0], nil
		}
		return "", fmt.Errorf("%w: metadata %s is missing", ratekit.ErrEmptyKey, name)
	}
}

// ByMethod keys calls by their full method, "/package.Service/Method": one
// counter per method for all clients. Join it with ByIP for one counter per
// client and method.
func ByMethod() KeyFunc {
	return func(ctx context.Context) (string, error) {
		if m, ok := grpc.Method(ctx); ok && m != "" {
			return m, nil
		}
		return "", fmt.Errorf("%w: the call has no method", ratekit.ErrEmptyKey)
	}
}

var errNoCertificate = fmt.Errorf("%w: the call has no verified client certificate", ratekit.ErrEmptyKey)

// ByPeerCertificate keys calls by the identity of the client's verified TLS
// certificate (mutual TLS): its first URI name (a SPIFFE ID, for example),
// else its subject's distinguished name. A call without a verified
// certificate (plaintext, or a server that does not verify client
// certificates) is a key error.
func ByPeerCertificate() KeyFunc {
	return func(ctx context.Context) (string, error) {
		p, ok := peer.FromContext(ctx)
		if !ok {
			return "", errNoCertificate
		}
		info, ok := p.AuthInfo.(credentials.TLSInfo)
		if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
			return "", errNoCertificate
		}
		leaf := info.State.VerifiedChains[0][0]
		if len(leaf.URIs) > 0 {
			return leaf.URIs[0].String(), nil
		}
		if s := leaf.Subject.String(); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("%w: the client certificate names no URI and no subject", ratekit.ErrEmptyKey)
	}
}

// Join keys calls by several key functions at once, as ratekit.Join does:
// an error or an empty part fails the whole key.
func Join(keys ...KeyFunc) KeyFunc { return adapter.Join(keys...) }

// An Option configures UnaryServerInterceptor and StreamServerInterceptor.
// The names are ratekit's; options that read the call take its context
// (grpc.Method, peer.FromContext, metadata.FromIncomingContext read it). A
// nil Option is ignored.
type Option interface{ apply(*server) }

// optionFunc adapts a function to Option (T server) and ClientOption (T
// client).
type optionFunc[T any] func(*T)

func (f optionFunc[T]) apply(c *T) { f(c) }

// WithHeaders selects the rate-limit fields sent as metadata (see
// ratekit.WithHeaders; default legacy and IETF). The field names are the
// header names in lower case: ratelimit, ratelimit-policy,
// x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset.
func WithHeaders(mode ratekit.HeaderMode) Option { return core(ratekit.WithHeaders(mode)) }

// WithErrorCode sets the ErrorInfo reason and the message of denials (see
// ratekit.WithErrorCode; default response.CodeRateLimited).
func WithErrorCode(code response.Code) Option { return core(ratekit.WithErrorCode(code)) }

// WithErrorPolicy sets what a store failure gives (see
// ratekit.WithErrorPolicy; default FailOpen; FailClosed answers
// codes.Unavailable).
func WithErrorPolicy(p ratekit.ErrorPolicy) Option { return core(ratekit.WithErrorPolicy(p)) }

// WithKeyErrorPolicy sets what a key or cost error gives (see
// ratekit.WithKeyErrorPolicy; default FailClosed, codes.InvalidArgument).
func WithKeyErrorPolicy(p ratekit.ErrorPolicy) Option { return core(ratekit.WithKeyErrorPolicy(p)) }

// WithTimeout bounds each store call (see ratekit.WithTimeout; default
// ratekit.DefaultTimeout, 100 ms). The call's own deadline bounds it too.
func WithTimeout(d time.Duration) Option { return core(ratekit.WithTimeout(d)) }

// WithHeaderClock sets the clock x-ratelimit-reset counts from (see
// ratekit.WithHeaderClock).
func WithHeaderClock(now func() time.Time) Option { return core(ratekit.WithHeaderClock(now)) }

// WithObserver reports every decision to obs (see ratekit.WithObserver):
// the limits' names are the policy labels, so limits named per method give
// per-method metrics.
func WithObserver(obs ...observe.Observer) Option { return core(ratekit.WithObserver(obs...)) }

// WithSettle lets handlers settle a call's real cost after the fact (see
// ratekit.WithSettle): the handler finds the Reservation with
// ratekit.ReservationFrom(ctx), or ss.Context() for a stream. Per-message
// charges (WithMessageCost) are not part of it.
func WithSettle() Option {
	return optionFunc[server](func(s *server) { s.life = append(s.life, ratekit.WithSettle()) })
}

// WithCountIf counts a call only when counts reports true for its status
// once the handler returns, and refunds it otherwise (see
// ratekit.WithCountIf). counts takes the HTTPStatus of the call's code (a
// handler that panics: 500). Per-message charges (WithMessageCost) are kept.
func WithCountIf(counts func(status int) bool) Option {
	return optionFunc[server](func(s *server) { s.life = append(s.life, ratekit.WithCountIf(counts)) })
}

// WithSkip lets calls for which f returns true through, uncounted and
// without rate-limit metadata. It adds to the default skips (see
// WithoutDefaultSkips).
func WithSkip(f func(ctx context.Context) bool) Option {
	return adapterOption(adapter.WithSkip(f))
}

// WithCost charges n per call (per stream, when it opens) instead of 1.
func WithCost(n int64) Option { return adapterOption(adapter.WithCost[context.Context](n)) }

// WithCostFunc charges f(ctx) per call; an invalid cost goes to the key
// error policy.
func WithCostFunc(f func(ctx context.Context) int64) Option {
	return adapterOption(adapter.WithCostFunc(f))
}

// WithErrorHandler receives every error the error policies handle (default:
// ratekit's, a slog warning at most once per second).
func WithErrorHandler(f func(ctx context.Context, err error)) Option {
	return adapterOption(adapter.WithErrorHandler(f))
}

// WithoutDefaultSkips counts calls to the health service
// (/grpc.health.v1.Health/) and to server reflection
// (/grpc.reflection.v1.ServerReflection/, and v1alpha), which are let
// through uncounted by default.
func WithoutDefaultSkips() Option { return optionFunc[server](func(s *server) { s.allMethods = true }) }

// WithMessageCost charges n for every message a stream's handler receives,
// under the key the stream opened with, on top of the charge at opening
// (default 0: none); a refused message makes RecvMsg return the refusal.
// Messages are plain charges, never settled nor refunded, which a Limiter
// with an InFlight limit cannot make: the interceptor then panics. It does
// not apply to unary calls.
func WithMessageCost(n int64) Option {
	return optionFunc[server](func(s *server) { s.messageCost = n })
}

// core is an option of ratekit's own.
func core(o ratekit.Option) Option { return adapterOption(adapter.Core[context.Context](o)) }

func adapterOption(o adapter.Option[context.Context]) Option {
	return optionFunc[server](func(s *server) { s.adapter = append(s.adapter, o) })
}
