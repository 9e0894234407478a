package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit/store/redisengine"
)

// pipeliner returns the go-redis autopipeliner that the store sends its
// concurrent calls through, or nil: a *redis.Client (also a Sentinel failover
// client) or a *redis.ClusterClient whose options set AutoPipelineOptions, as
// ClientOptions does, gets its client's deferred autopipeliner
// (AsyncAutoPipeline), which batches concurrent calls into pipelines; a
// cluster's routes each call by slot to its node. Other clients, and clients
// whose options leave AutoPipelineOptions nil, send each call on its own
// pooled connection.
func pipeliner(client redis.Scripter) (*redis.AutoPipeliner, error) {
	var (
		ap  *redis.AutoPipeliner
		err error
	)
	switch c := client.(type) {
	case *redis.Client:
		if c.Options().AutoPipelineOptions == nil {
			return nil, nil
		}
		ap, err = c.AsyncAutoPipeline()
	case *redis.ClusterClient:
		if c.Options().AutoPipelineOptions == nil {
			return nil, nil
		}
		ap, err = c.AsyncAutoPipeline()
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ratekit: redisstore: the client's AutoPipelineOptions: %w; fix them or set them to nil", err)
	}
	return ap, nil
}

// pipedArgs appends cmd's command line to all for a call sent through the
// autopipeliner, which may write it after Eval returns (when its caller's
// context ended first): the strings are copied into one slice of the call's
// own, so nothing points into cmd.
func pipedArgs(all []any, cmd *redisengine.Command) []any {
	vals := make([]string, 0, 1+len(cmd.Keys)+cmd.NumArgs())
	vals = append(vals, cmd.Script)
	vals = append(vals, cmd.Keys...)
	vals = cmd.AppendArgs(vals)
	all = append(all, commandName(cmd.Name), &vals[0], len(cmd.Keys))
	for i := range vals[1:] {
		all = append(all, &vals[1+i])
	}
	return all
}

// pipedCmd and pipedInts are noRetryCmd and noRetryInts for a call sent
// through the autopipeliner, with its caller's context: the batch runs on the
// autopipeliner's own context, so dropExpired reads the caller's here. They
// embed the concrete commands, whose unexported methods go-redis's
// autopipeliner uses, so they must not wrap a redis.Cmder.
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

// errExpired is the error of a piped call that was not written because its
// caller had stopped waiting: nobody reads it but the command itself.
var errExpired = errors.New("ratekit: redisstore: not sent: the caller's context ended while the call waited for its batch")

// expired returns the error of c when it is a piped call whose caller's
// context has ended, and gives c that error; else nil.
func expired(c redis.Cmder) error {
	p, ok := c.(interface{ callerContext() context.Context })
	if !ok || p.callerContext().Err() == nil {
		return nil
	}
	err := fmt.Errorf("%w: %w", errExpired, p.callerContext().Err())
	c.SetErr(err)
	return err
}

// dropExpired is a go-redis hook, added to a client whose calls the store
// pipelines, that never writes a piped call whose caller has stopped waiting
// for it (its context ended while the call sat in the autopipeliner's queue,
// for instance behind a batch that a hung Redis does not answer): its caller
// has its error already, and a call sent later would charge a subject for a
// decision nobody received. The check is made when the batch is dispatched:
// a batch that then waits for a connection may still be written after its
// callers gave up, as a call on a connection of its own may be. Other
// commands pass unchanged.
type dropExpired struct{}

// DialHook implements redis.Hook, changing nothing.
func (dropExpired) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook: the autopipeliner sends a batch of one
// call as a plain command.
func (dropExpired) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		if err := expired(c); err != nil {
			return err // go-redis sets a lone call's error to the hook's
		}
		return next(ctx, c)
	}
}

// ProcessPipelineHook implements redis.Hook: it sends the batch without its
// expired calls.
func (dropExpired) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var live []redis.Cmder // nil while no call has expired
		for i, c := range cmds {
			switch {
			case expired(c) != nil:
				if live == nil {
					live = append(make([]redis.Cmder, 0, len(cmds)-1), cmds[:i]...)
				}
			case live != nil:
				live = append(live, c)
			}
		}
		switch {
		case live == nil:
			return next(ctx, cmds)
		case len(live) == 0:
			return nil // each call holds its error
		}
		return next(ctx, live)
	}
}
