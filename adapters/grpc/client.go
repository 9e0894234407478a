package ratekitgrpc

import (
	"context"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Defaults of the client interceptors (see WithMaxWait and WithMaxRetries).
const (
	DefaultMaxWait    = 10 * time.Second
	DefaultMaxRetries = 3
)

// A ClientOption configures UnaryClientInterceptor and
// StreamClientInterceptor.
type ClientOption interface{ apply(*client) }

// WithMaxWait sets the longest a call waits in all, before it is sent and
// between its retries (default DefaultMaxWait); the call's deadline bounds
// it too. A refusal whose advised time is further away is returned as it
// is, at once. 0 or less: no waiting, no retry.
func WithMaxWait(d time.Duration) ClientOption {
	return optionFunc[client](func(c *client) { c.maxWait = d })
}

// WithMaxRetries sets how many times a refused unary call is sent again at
// most (default DefaultMaxRetries); 0 or less: none. Streams are not sent
// again; see StreamClientInterceptor.
func WithMaxRetries(n int) ClientOption {
	return optionFunc[client](func(c *client) { c.maxRetries = n })
}

// client is the state of a client interceptor: per method, the time before
// which the server said it would refuse calls.
type client struct {
	maxWait    time.Duration
	maxRetries int

	mu   sync.Mutex
	hold map[string]time.Time
}

// UnaryClientInterceptor returns a gRPC unary client interceptor that
// honours google.rpc.RetryInfo. A call refused with codes.ResourceExhausted
// and a RetryInfo is sent again after the advised time (at most
// WithMaxRetries times) when it would be sent before its deadline and
// within WithMaxWait; otherwise the refusal is returned at once. Until then,
// later calls of the method wait too, under the same bounds, or are refused
// in the client with a RetryInfo of the time left and never sent. A refusal
// by InFlight limits alone (ErrorInfo quota_unit "concurrent-requests")
// holds back no other call: a slot comes back whenever any call ends.
//
// It is safe for concurrent use. Its state is per method: build one per
// connection, and one per subject for a client that calls on behalf of
// several (a gateway).
func UnaryClientInterceptor(opts ...ClientOption) grpc.UnaryClientInterceptor {
	return newClient(opts).unary
}

// StreamClientInterceptor returns a gRPC stream client interceptor that
// honours google.rpc.RetryInfo for streams: after a refusal, the method's
// next streams wait, or are refused in the client, as UnaryClientInterceptor
// has its calls do. A refused stream is not opened again, since its
// messages are gone: gRPC's own retry policy replays it, waiting the
// grpc-retry-pushback-ms the server interceptors send, when the service
// config names RESOURCE_EXHAUSTED among its retryable codes.
func StreamClientInterceptor(opts ...ClientOption) grpc.StreamClientInterceptor {
	return newClient(opts).stream
}

func newClient(opts []ClientOption) *client {
	c := &client{maxWait: DefaultMaxWait, maxRetries: DefaultMaxRetries, hold: make(map[string]time.Time)}
	for _, o := range opts {
		if o != nil {
			o.apply(c)
		}
	}
	return c
}

func (c *client) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	limit := c.limit(ctx)
	var after time.Time // the advised time of this call's last refusal
	for retry := 0; ; retry++ {
		if err := c.await(ctx, method, after, limit); err != nil {
			return err
		}
		err := invoker(ctx, method, req, reply, cc, opts...)
		until, refused := c.note(method, err)
		if !refused || retry >= c.maxRetries || until.After(limit) {
			return err
		}
		after = until
	}
}

func (c *client) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if err := c.await(ctx, method, time.Time{}, c.limit(ctx)); err != nil {
		return nil, err
	}
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		c.note(method, err)
		return nil, err
	}
	return &watchedStream{ClientStream: cs, c: c, method: method}, nil
}

// watchedStream notes the refusal a stream ends with.
type watchedStream struct {
	grpc.ClientStream
	c      *client
	method string
}

func (w *watchedStream) RecvMsg(m any) error {
	err := w.ClientStream.RecvMsg(m)
	if err != nil {
		w.c.note(w.method, err)
	}
	return err
}

func (w *watchedStream) Header() (metadata.MD, error) {
	md, err := w.ClientStream.Header()
	if err != nil {
		w.c.note(w.method, err)
	}
	return md, err
}

// limit returns the latest time a call may wait until: its deadline, or
// the maximum wait from now.
func (c *client) limit(ctx context.Context) time.Time {
	limit := time.Now().Add(c.maxWait)
	if d, ok := ctx.Deadline(); ok && d.Before(limit) {
		return d
	}
	return limit
}

// await waits until method is no longer held and after has passed, or
// refuses the call when that lies past limit; it ends with ctx.
func (c *client) await(ctx context.Context, method string, after, limit time.Time) error {
	c.mu.Lock()
	until := c.hold[method]
	c.mu.Unlock()
	if after.After(until) {
		until = after
	}
	wait := time.Until(until)
	if wait <= 0 {
		return nil
	}
	if !until.Before(limit) {
		return statusError(codes.ResourceExhausted, "ratekit: the server refused "+method+" until later; the call was not sent",
			&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)})
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// note returns the advised time of err, when it is a ResourceExhausted
// status with a RetryInfo, and holds method until then unless its ErrorInfo
// marks a refusal by InFlight limits alone.
func (c *client) note(method string, err error) (until time.Time, refused bool) {
	st, _ := status.FromError(err) // nil: OK; an error that is no status: Unknown
	if st.Code() != codes.ResourceExhausted {
		return time.Time{}, false
	}
	var delay time.Duration
	concurrent := false
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			if r := d.RetryDelay.AsDuration(); r > 0 {
				delay = r
			}
		case *errdetails.ErrorInfo:
			concurrent = d.Domain == Domain && d.Metadata[infoQuotaUnit] == quotaUnitConcurrent
		}
	}
	if delay == 0 {
		return time.Time{}, false
	}
	until = time.Now().Add(delay)
	if concurrent {
		return until, true
	}
	c.mu.Lock()
	if until.After(c.hold[method]) {
		c.hold[method] = until
	}
	c.mu.Unlock()
	return until, true
}
