package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

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
// store runs here, as a command go-redis will not retry. A failure that hints
// at a changed cluster also asks a cluster client to reload its slot map (see
// reloadSlots), whether or not the call may try again.
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
		s.reloadSlots(start, err)
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
	if errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrPoolExhausted) {
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

// reloadEvery is the shortest time between two slot-map reloads that the
// store asks of one cluster client.
const reloadEvery = 250 * time.Millisecond

// noSlotReload turns reloadSlots off, for tests that measure the client alone.
var noSlotReload atomic.Bool

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
// the calls that follow, among them run's next attempt when the script
// provably did not run; a call whose script may have run is still not sent
// again. At most one reload per reloadEvery is asked of a client, whatever
// the number of stores and failing calls, so a failure that lasts asks again
// until the map is right; go-redis runs one reload at a time.
func (s *Store) reloadSlots(start time.Time, err error) {
	c, ok := s.proc.(*redis.ClusterClient)
	if !ok || c == nil || noSlotReload.Load() {
		return
	}
	if !staleHint(err) && s.dials.since(start) == nil {
		return
	}
	g := gateOf(c)
	now := time.Now().UnixNano()
	last := g.last.Load()
	if now-last < int64(reloadEvery) || !g.last.CompareAndSwap(last, now) {
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

// reloadGate is the time of the last reload the store asked of one client.
type reloadGate struct{ last atomic.Int64 }

// gates holds one reloadGate per cluster client, keyed weakly: an entry
// goes when its client is collected.
var gates sync.Map // weak.Pointer[redis.ClusterClient] -> *reloadGate

func gateOf(c *redis.ClusterClient) *reloadGate {
	key := weak.Make(c)
	if g, ok := gates.Load(key); ok {
		return g.(*reloadGate)
	}
	g, loaded := gates.LoadOrStore(key, &reloadGate{})
	if !loaded {
		runtime.AddCleanup(c, func(k weak.Pointer[redis.ClusterClient]) { gates.Delete(k) }, key)
	}
	return g.(*reloadGate)
}
