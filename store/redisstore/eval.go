package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// noRetryCmd is a script command that go-redis must not send twice: once it
// may have reached Redis, a retry could charge the subject again.
type noRetryCmd struct{ *redis.Cmd }

// NoRetry implements redis.Cmder.
func (noRetryCmd) NoRetry() bool { return true }

// Clone implements redis.Cmder, keeping NoRetry.
func (c noRetryCmd) Clone() redis.Cmder { return noRetryCmd{c.Cmd.Clone().(*redis.Cmd)} }

// eval runs the engine with EVALSHA and, when the script cache is empty
// (NOSCRIPT, so the script did not run), with EVAL.
func (s *Store) eval(ctx context.Context, keys []string, args []any) (any, error) {
	if s.proc == nil {
		return engine.Run(ctx, s.client, keys, args...).Result()
	}
	cmd := s.command(ctx, "evalsha", engine.Hash(), keys, args)
	err := s.proc.Process(ctx, cmd)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		cmd = s.command(ctx, "eval", engineSource, keys, args)
		err = s.proc.Process(ctx, cmd)
	}
	if err != nil {
		return nil, fmt.Errorf("ratekit: redisstore: %w", err)
	}
	return cmd.Val(), nil
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
