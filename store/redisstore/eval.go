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

	"github.com/ratekit/ratekit/store/redisengine"
)

// noRetryCmd is a script command that go-redis must not send twice: once it
// may have reached Redis, a retry could charge the subject again.
type noRetryCmd struct{ *redis.Cmd }

// NoRetry implements redis.Cmder.
func (noRetryCmd) NoRetry() bool { return true }

// Clone implements redis.Cmder, keeping NoRetry.
func (c noRetryCmd) Clone() redis.Cmder { return noRetryCmd{c.Cmd.Clone().(*redis.Cmd)} }

// noRetryInts is noRetryCmd for a command whose reply is an array of
// integers, read without boxing each element.
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

var _ redisengine.Conn = (*conn)(nil)

// Eval implements redisengine.Conn: cmd goes out as one command that go-redis
// will not retry, its arguments passed as *string (no copies), routed by its
// first key; a reply of integers (cmd.IntegerReply) is read as []int64. A
// failure that hints at a changed cluster asks a cluster client to reload
// its slot map (see reloadSlots).
func (c *conn) Eval(ctx context.Context, cmd *redisengine.Command) (any, error) {
	s := (*Store)(c)
	start := time.Now()
	all := make([]any, 0, 3+len(cmd.Keys)+cmd.NumArgs())
	all = append(all, commandName(cmd.Name), &cmd.Script, len(cmd.Keys))
	for i := range cmd.Keys {
		all = append(all, &cmd.Keys[i])
	}
	for p := range cmd.Args() {
		all = append(all, p)
	}
	if cmd.IntegerReply() {
		rc := redis.NewIntSliceCmd(ctx, all...)
		rc.SetFirstKeyPos(3)
		if err := s.send(ctx, start, noRetryInts{rc}); err != nil {
			return nil, err
		}
		return rc.Val(), nil
	}
	rc := redis.NewCmd(ctx, all...)
	rc.SetFirstKeyPos(3)
	if err := s.send(ctx, start, noRetryCmd{rc}); err != nil {
		return nil, err
	}
	return rc.Val(), nil
}

// send processes c, a call that started at start, and classifies its
// failure; see Eval.
func (s *Store) send(ctx context.Context, start time.Time, c redis.Cmder) error {
	if err := s.proc.Process(ctx, c); err != nil {
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
// server of a *redis.Client, on every master of a *redis.ClusterClient and
// on every shard of a *redis.Ring; a client of another type sends it once,
// as it routes it.
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

// explain turns the engine's failure of a call that started at start into
// the store's error: when the engine gave up (a *redisengine.RunError), the
// error holds the failure and, when ctx ended, ctx's error too (see cause).
// Other errors (bad arguments, a reply of the wrong shape) are the engine's.
func (s *Store) explain(ctx context.Context, start time.Time, err error) error {
	if err == nil {
		return nil
	}
	var re *redisengine.RunError
	if !errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("ratekit: redisstore: %w", s.cause(ctx, start, re.Err, re.Ended))
}

// reloadEvery is the shortest time between two slot-map reloads that a
// store asks of its cluster client. Stores that share one client each keep
// their own time: a client serving k stores gets at most k reloads per
// period, and go-redis coalesces reloads that overlap.
const reloadEvery = 250 * time.Millisecond

// reloadSlots asks a *redis.ClusterClient to reload its slot map when err, the
// failure of a call that started at start, hints that the map may be stale:
// the node could not be reached or its connection failed (see staleHint), or
// a dial failed since start. go-redis reloads the map by itself only after a
// MOVED, ASK or READONLY reply and every ClusterStateReloadInterval (60 s by
// default), and marks a node as failing only for commands it may retry, which
// the store's are not; so without this a dead master's slots would go to its
// address until the next periodic reload, long after its replica took over.
//
// The reload runs in the background (ReloadState returns at once) and serves
// the calls that follow, among them the engine's next attempt when the script
// provably did not run; a call whose script may have run is still not sent
// again. At most one reload per reloadEvery is asked of a client, whatever
// the number of stores and failing calls, so a failure that lasts asks again
// until the map is right; go-redis runs one reload at a time.
func (s *Store) reloadSlots(start time.Time, err error) {
	c, ok := s.proc.(*redis.ClusterClient)
	if !ok || c == nil {
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
// changed: a connection that could not be made or that failed (a dead or
// unreachable node), a timeout (a node that stopped answering), or a reply of
// a node that is changing roles or slots. Script errors and replies that
// prove the node answers as it should (NOSCRIPT, BUSY, OOM, ERR) are not.
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
