package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit/store"
	"github.com/ratekit/ratekit/store/redisengine"
)

// noRetryCmd is a script command that go-redis must not send twice: once it
// may have reached Redis, a retry could charge the subject again.
type noRetryCmd struct{ *redis.Cmd }

// NoRetry implements redis.Cmder.
func (noRetryCmd) NoRetry() bool { return true }

// Clone implements redis.Cmder, keeping NoRetry.
func (c noRetryCmd) Clone() redis.Cmder { return noRetryCmd{c.Cmd.Clone().(*redis.Cmd)} }

// noRetryInts is noRetryCmd for a reply of integers (Command.IntegerReply).
type noRetryInts struct{ *redis.IntSliceCmd }

// NoRetry implements redis.Cmder.
func (noRetryInts) NoRetry() bool { return true }

// Clone implements redis.Cmder, keeping NoRetry.
func (c noRetryInts) Clone() redis.Cmder {
	return noRetryInts{c.IntSliceCmd.Clone().(*redis.IntSliceCmd)}
}

// conn is the store as the engine's redisengine.Conn: it sends the engine's
// calls through go-redis.
type conn Store

var (
	_ redisengine.Conn = (*conn)(nil)
	_ store.Overrider  = (*Store)(nil)
)

// pipelineAbove is the number of calls in flight (this one included) above
// which the store pipelines: below, a connection each keeps Redis and the
// callers busy at once, where small batches take turns (docs/performance.md).
const pipelineAbove = 8

// Eval implements redisengine.Conn: cmd goes out as one command that go-redis
// will not retry, routed by its first key, through the client's
// autopipeliner while more than pipelineAbove calls are in flight (see
// pipeliner), else on a pooled connection of its own with its arguments
// passed as *string (no copies).
func (c *conn) Eval(ctx context.Context, cmd *redisengine.Command) (any, error) {
	s := (*Store)(c)
	start := time.Now()
	piped := false
	if s.ap != nil {
		piped = s.busy.Add(1) > pipelineAbove
		defer s.busy.Add(-1)
	}
	all := make([]any, 0, 3+len(cmd.Keys)+cmd.NumArgs())
	if piped {
		all = pipedArgs(all, cmd)
	} else {
		all = append(all, commandName(cmd.Name), &cmd.Script, len(cmd.Keys))
		for i := range cmd.Keys {
			all = append(all, &cmd.Keys[i])
		}
		for p := range cmd.Args() {
			all = append(all, p)
		}
	}
	if cmd.IntegerReply() {
		rc := redis.NewIntSliceCmd(ctx, all...)
		rc.SetFirstKeyPos(3)
		var call redis.Cmder = noRetryInts{rc}
		if piped {
			call = pipedInts{noRetryInts{rc}, ctx}
		}
		if err := s.send(ctx, start, call, piped); err != nil {
			return nil, err
		}
		return rc.Val(), nil
	}
	rc := redis.NewCmd(ctx, all...)
	rc.SetFirstKeyPos(3)
	var call redis.Cmder = noRetryCmd{rc}
	if piped {
		call = pipedCmd{noRetryCmd{rc}, ctx}
	}
	if err := s.send(ctx, start, call, piped); err != nil {
		return nil, err
	}
	return rc.Val(), nil
}

// send processes c, a call that started at start (piped: through the
// autopipeliner, waited for until ctx ends, then left to its batch), and
// classifies its failure; one that hints at a changed cluster reloads the
// slot map.
func (s *Store) send(ctx context.Context, start time.Time, c redis.Cmder, piped bool) error {
	var err error
	if piped {
		err = s.ap.Submit(ctx, c).WaitContext(ctx)
	} else {
		err = s.proc.Process(ctx, c)
	}
	if err != nil {
		s.reloadSlots(start, err)
		return classify(err)
	}
	return nil
}

// commandName returns name in lower case, boxed without an allocation (a
// constant): go-redis looks commands up by their lower-case names.
func commandName(name string) any {
	switch name {
	case "FCALL":
		return "fcall"
	case "EVALSHA":
		return "evalsha"
	case "EVAL":
		return "eval"
	}
	return strings.ToLower(name)
}

// LoadLibrary implements redisengine.Conn: FUNCTION LOAD REPLACE on the
// server, on every master of a cluster or shard of a ring, or once, as
// routed, through a client of another type.
func (c *conn) LoadLibrary(ctx context.Context, code string) error {
	load := func(ctx context.Context, cl *redis.Client) error {
		return classify(cl.FunctionLoadReplace(ctx, code).Err())
	}
	switch cl := c.proc.(type) {
	case *redis.Client:
		return load(ctx, cl)
	case *redis.ClusterClient:
		return cl.ForEachMaster(ctx, load)
	case *redis.Ring:
		return cl.ForEachShard(ctx, load)
	default:
		return classify(c.proc.Process(ctx, redis.NewStringCmd(ctx, "function", "load", "replace", code)))
	}
}

// classify tells the engine what err is: an error reply of Redis, a call
// that never left the client (no free connection in the pool), or another
// failure.
func classify(err error) error {
	var re redis.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrPoolExhausted):
		return redisengine.NotSent(err)
	case errors.As(err, &re):
		return &redisengine.ReplyError{Msg: re.Error(), Err: err}
	}
	return err
}

// explain is the engine's Options.Explain, which it calls with an error: a
// *redisengine.RunError becomes the store's error, with ctx's error when ctx
// ended (see cause); other errors are the engine's.
func (s *Store) explain(ctx context.Context, start time.Time, err error) error {
	var re *redisengine.RunError
	if !errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("ratekit: redisstore: %w", s.cause(ctx, start, re.Err, re.Ended))
}

// reloadEvery is the shortest time between two slot-map reloads that a
// store asks of its cluster client.
const reloadEvery = 250 * time.Millisecond

// reloadSlots asks a *redis.ClusterClient to reload its slot map, in the
// background, when err, the failure of a call that started at start, hints
// that the map may be stale (see staleHint), or a dial failed since start:
// go-redis alone would keep sending a dead master's slots to it long after
// its replica took over.
func (s *Store) reloadSlots(start time.Time, err error) {
	c, ok := s.proc.(*redis.ClusterClient)
	if !ok {
		return
	}
	if !staleHint(err) && s.dials.since(start) == nil {
		return
	}
	now := time.Now().UnixNano()
	last := s.lastReload.Load()
	if now-last < int64(reloadEvery) || !s.lastReload.CompareAndSwap(last, now) {
		return
	}
	c.ReloadState(context.Background())
}

// staleHint reports whether err may come from a cluster whose topology
// changed: a failed connection, a timeout, or a reply of a node that is
// changing roles or slots.
func staleHint(err error) bool {
	var ne net.Error
	switch {
	case errors.As(err, &ne),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, redis.ErrPoolTimeout),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	for _, prefix := range []string{"CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "LOADING", "READONLY", "MOVED ", "ASK "} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}
