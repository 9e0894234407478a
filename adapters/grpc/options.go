package ratekitgrpc

import (
	"context"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/response"
)

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
