package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// noRetryCmd is a script command that go-redis must not send twice: once it
// may have reached Redis, a retry could charge the subject again.
type noRetryCmd struct{ *redis.Cmd }

// NoRetry implements redis.Cmder.
func (noRetryCmd) NoRetry() bool { return true }

// Clone implements redis.Cmder, keeping NoRetry.
func (c noRetryCmd) Clone() redis.Cmder { return noRetryCmd{c.Cmd.Clone().(*redis.Cmd)} }

// attempts bounds how often eval sends a script that provably did not run.
const attempts = 3

// eval runs the engine; see run.
func (s *Store) eval(ctx context.Context, keys []string, args []any) (any, error) {
	return s.run(ctx, s.script, keys, args)
}

// run runs sc with EVALSHA and, when the script cache is empty (NOSCRIPT, so
// the script did not run), with EVAL. Failures that prove the script never
// ran (no connection, a loading or resharding node) are tried again a few
// times within ctx: no pause outlasts ctx, and go-redis bounds each attempt by
// ctx (ContextTimeoutEnabled). Any other failure may have come after the
// script ran and is returned as it is. When ctx ends first, the error holds
// ctx's error and the last underlying failure (see cause). Every script of the
// store runs here, as a command go-redis will not retry.
func (s *Store) run(ctx context.Context, sc *script, keys []string, args []any) (any, error) {
	start := time.Now()
	var err error
	ended := false
	for attempt := range attempts {
		if attempt > 0 && !pause(ctx, time.Duration(attempt)*10*time.Millisecond) {
			ended = true
			break
		}
		cmd := s.command(ctx, "evalsha", sc.sha, keys, args)
		err = s.proc.Process(ctx, cmd)
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			cmd = s.command(ctx, "eval", sc.src, keys, args)
			err = s.proc.Process(ctx, cmd)
		}
		if err == nil {
			return cmd.Val(), nil
		}
		if !neverRan(err) {
			break
		}
	}
	return nil, fmt.Errorf("ratekit: redisstore: %w", s.cause(ctx, start, err, ended))
}

// neverRan reports whether err proves that Redis did not run the script.
func neverRan(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if errors.Is(err, redis.ErrPoolTimeout) {
		return true
	}
	for _, prefix := range []string{"LOADING", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "BUSY "} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}

// pause waits d unless ctx ends first; it reports whether it waited.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Store) command(ctx context.Context, name, script string, keys []string, args []any) noRetryCmd {
	all := make([]any, 0, 3+len(keys)+len(args))
	all = append(all, name, script, len(keys))
	for _, k := range keys {
		all = append(all, k)
	}
	all = append(all, args...)
	cmd := redis.NewCmd(ctx, all...)
	cmd.SetFirstKeyPos(3)
	return noRetryCmd{cmd}
}
