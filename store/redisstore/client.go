package redisstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkClient rejects a go-redis client that would not bound its socket I/O
// by the caller's context. Clients of other types are accepted as they are.
func checkClient(client redis.Scripter) error {
	enabled, nilClient := false, false
	switch c := client.(type) {
	case *redis.Client:
		nilClient = c == nil
		enabled = !nilClient && c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		nilClient = c == nil
		enabled = !nilClient && c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		nilClient = c == nil
		enabled = !nilClient && c.Options().ContextTimeoutEnabled
	default:
		return nil
	}
	if nilClient {
		return errNilClient
	}
	if !enabled {
		return fmt.Errorf("ratekit: redisstore: the %T's ContextTimeoutEnabled is false, so a Redis that stops answering "+
			"would hold each request for the client's ReadTimeout instead of the middleware's timeout; "+
			"set ContextTimeoutEnabled: true in the client's options", client)
	}
	return nil
}

// dialWatch is a go-redis hook that keeps the last failed dial: go-redis
// retries a failed dial before it reports it, so a call whose context ends
// first sees only the context's error.
type dialWatch struct {
	last atomic.Pointer[dialFailure]
}

type dialFailure struct {
	err error
	at  time.Time
}

// watch adds w to the client's dials: those of a *redis.Client, those of the
// shards of a *redis.Ring, and those of the nodes a *redis.ClusterClient
// creates from now on. Clients of other types are not watched.
func (w *dialWatch) watch(client redis.Scripter) {
	hook := func(c *redis.Client) { c.AddHook(w) }
	switch c := client.(type) {
	case *redis.Client:
		hook(c)
	case *redis.ClusterClient:
		c.OnNewNode(hook)
	case *redis.Ring:
		c.OnNewNode(hook)
		_ = c.ForEachShard(context.Background(), func(_ context.Context, c *redis.Client) error {
			hook(c)
			return nil
		})
	}
}

// DialHook implements redis.Hook: it records failed dials, except those
// cancelled by go-redis, which say nothing about Redis.
func (w *dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil && !errors.Is(err, context.Canceled) {
			w.last.Store(&dialFailure{err: err, at: time.Now()})
		}
		return conn, err
	}
}

// ProcessHook implements redis.Hook, changing nothing.
func (*dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook implements redis.Hook, changing nothing.
func (*dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// since returns the last dial failure at or after start, or nil.
func (w *dialWatch) since(start time.Time) error {
	if f := w.last.Load(); f != nil && !f.at.Before(start) {
		return f.err
	}
	return nil
}

// cause explains err, the failure of a call that started at start. When the
// call ended because ctx did (ended, or err is a timeout once ctx is done),
// it is ctx's error with the last failure behind it: err, or a dial that
// failed since start when err is only the context's. Otherwise it is err.
func (s *Store) cause(ctx context.Context, start time.Time, err error, ended bool) error {
	ctxErr := ctx.Err()
	if d, ok := ctx.Deadline(); ok && ctxErr == nil && !time.Now().Before(d) {
		ctxErr = context.DeadlineExceeded // a read deadline set from ctx can fire before ctx's own timer
	}
	if ctxErr == nil || !ended && !timedOut(err) {
		return err
	}
	last := err
	if last == nil || isContextErr(last) {
		if d := s.dials.since(start); d != nil {
			last = d
		}
	}
	if last == nil || last.Error() == ctxErr.Error() {
		return ctxErr
	}
	return fmt.Errorf("%w (last error: %w)", ctxErr, last)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// timedOut reports whether err is the kind of failure an ended context causes.
func timedOut(err error) bool {
	var ne net.Error
	return isContextErr(err) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// ping sends PING to every node the client routes to (see Ping).
func (s *Store) ping(ctx context.Context) error {
	start := time.Now()
	fail := func(addr string, err error) error {
		return &pingError{addr: addr, err: s.cause(ctx, start, err, false)}
	}
	pingNode := func(ctx context.Context, n *redis.Client) error {
		if err := n.Ping(ctx).Err(); err != nil {
			return fail(n.Options().Addr, err)
		}
		return nil
	}
	switch c := s.proc.(type) {
	case *redis.Client:
		return pingNode(ctx, c)
	case *redis.ClusterClient:
		err := c.ForEachMaster(ctx, pingNode)
		var pe *pingError
		if err != nil && !errors.As(err, &pe) { // the cluster's slots did not load
			return fail(strings.Join(c.Options().Addrs, ", "), err)
		}
		return err
	case *redis.Ring:
		var mu sync.Mutex
		var pinged []string
		err := c.ForEachShard(ctx, func(ctx context.Context, shard *redis.Client) error {
			mu.Lock()
			pinged = append(pinged, shard.Options().Addr)
			mu.Unlock()
			return pingNode(ctx, shard)
		})
		if err != nil {
			return err
		}
		down := slices.DeleteFunc(slices.Sorted(maps.Values(c.Options().Addrs)), func(addr string) bool {
			return slices.Contains(pinged, addr)
		})
		if len(down) > 0 {
			return &pingError{addr: strings.Join(down, ", "), err: errors.New("the ring's heartbeat found it down")}
		}
		return nil
	default:
		if err := s.proc.Process(ctx, redis.NewStatusCmd(ctx, "ping")); err != nil {
			return fail("", err)
		}
		return nil
	}
}

// pingError is Ping's error: the address (when known) and the cause.
type pingError struct {
	addr string
	err  error
}

func (e *pingError) Error() string {
	if e.addr == "" {
		return "ratekit: redisstore: cannot reach Redis: " + e.err.Error()
	}
	return "ratekit: redisstore: cannot reach Redis at " + e.addr + ": " + e.err.Error()
}

func (e *pingError) Unwrap() error { return e.err }
