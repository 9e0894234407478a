package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit/store/redisengine"
)

// pipeliner returns the deferred autopipeliner (AsyncAutoPipeline) of a
// *redis.Client (Sentinel's too) or *redis.ClusterClient whose options set
// AutoPipelineOptions, or nil: other clients send each call on a pooled
// connection of its own.
func pipeliner(client redis.Scripter) (*redis.AutoPipeliner, error) {
	set := false
	switch c := client.(type) {
	case *redis.Client:
		set = c.Options().AutoPipelineOptions != nil
	case *redis.ClusterClient:
		set = c.Options().AutoPipelineOptions != nil
	}
	if !set {
		return nil, nil
	}
	ap, err := client.(interface {
		AsyncAutoPipeline() (*redis.AutoPipeliner, error)
	}).AsyncAutoPipeline()
	if err != nil {
		return nil, fmt.Errorf("ratekit: redisstore: the client's AutoPipelineOptions: %w; fix them or set them to nil", err)
	}
	return ap, nil
}

// pipedArgs appends cmd's command line to all, its strings copied into one
// slice of the call's own: a piped call may be written after Eval returns.
func pipedArgs(all []any, cmd *redisengine.Command) []any {
	vals := append(append(make([]string, 0, 1+len(cmd.Keys)+cmd.NumArgs()), cmd.Script), cmd.Keys...)
	vals = cmd.AppendArgs(vals)
	all = append(all, commandName(cmd.Name), &vals[0], len(cmd.Keys))
	for i := range vals[1:] {
		all = append(all, &vals[1+i])
	}
	return all
}

// pipedCmd and pipedInts are noRetryCmd and noRetryInts for a piped call,
// with its caller's context for dropExpired (the batch runs on the
// autopipeliner's). They embed the concrete commands, whose unexported
// methods the autopipeliner uses: never wrap a redis.Cmder.
type pipedCmd struct {
	noRetryCmd
	ctx context.Context
}

type pipedInts struct {
	noRetryInts
	ctx context.Context
}

func (c pipedCmd) callerContext() context.Context  { return c.ctx }
func (c pipedInts) callerContext() context.Context { return c.ctx }

var errExpired = errors.New("ratekit: redisstore: not sent: the caller's context ended while the call waited for its batch")

// expired gives c, and returns, its error when c is a piped call whose
// caller's context has ended; else nil.
func expired(c redis.Cmder) error {
	p, ok := c.(interface{ callerContext() context.Context })
	if !ok || p.callerContext().Err() == nil {
		return nil
	}
	err := fmt.Errorf("%w: %w", errExpired, p.callerContext().Err())
	c.SetErr(err)
	return err
}

// dropExpired is a go-redis hook that never writes a piped call whose caller
// has stopped waiting (for instance behind a batch a hung Redis does not
// answer): it would charge a subject for a decision nobody received. It
// checks when the batch is dispatched; a batch that then waits for a
// connection may still be written late, as a direct call may.
type dropExpired struct{}

func (dropExpired) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook: the autopipeliner sends a batch of one call as a command, and
// sets its error to the hook's.
func (dropExpired) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		if err := expired(c); err != nil {
			return err
		}
		return next(ctx, c)
	}
}

// ProcessPipelineHook sends the batch without its expired calls, which hold
// their errors.
func (dropExpired) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		live := slices.DeleteFunc(slices.Clone(cmds), func(c redis.Cmder) bool { return expired(c) != nil })
		if len(live) == 0 {
			return nil
		}
		return next(ctx, live)
	}
}
