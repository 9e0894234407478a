package redisengine

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"
)

// How the engine runs its programs on a server.
const (
	modeUnknown   = iota // not yet asked: try FCALL
	modeFunctions        // FCALL; FUNCTION LOAD where the function is missing
	modeScripts          // EVALSHA; EVAL where the script is missing (no Functions)
)

// attempts bounds how often run sends a call that provably did not run.
const attempts = 3

// A RunError is the failure of a call the engine gave up on: Err is the last
// failure; Ended reports that ctx ended before another attempt could be
// sent. Its text is Err's; it unwraps to Err. Clients use it to say why a
// call failed (a context that ended, and the failure behind it). A RunError
// is not changed once made, so it may be shared.
type RunError struct {
	Err   error
	Ended bool
}

// Error implements error.
func (e *RunError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *RunError) Unwrap() error { return e.Err }

// run runs program prog with cmd's keys and arguments through c. A failure
// that proves the call never ran (see neverRan) is tried again, at most
// attempts times in all, 10 and then 20 ms apart, never past ctx; any other
// failure may have come after the call ran and is returned as it is, so a
// call is never charged twice. Errors are *RunErrors.
func (e *Engine) run(ctx context.Context, c Conn, prog int, cmd *Command) (any, error) {
	var err error
	ended := false
	for attempt := range attempts {
		if attempt > 0 && !pause(ctx, time.Duration(attempt)*10*time.Millisecond) {
			ended = true
			break
		}
		var reply any
		reply, err = e.once(ctx, c, prog, cmd)
		if err == nil {
			return reply, nil
		}
		if !neverRan(err) {
			break
		}
	}
	return nil, &RunError{Err: err, Ended: ended}
}

// once sends the call once, as a function where the server has Functions,
// else as a script. A reply that proves the call did not run is answered on
// the spot: "Function not found" (a new or restarted node, FUNCTION FLUSH)
// by loading the library and calling again, once, and as a script if the
// library was flushed again meanwhile; NOSCRIPT by EVAL; an
// unknown FCALL (Redis before 7.0) by scripts from then on; OOM, which
// refuses a function at once on a full Redis, by the script, which decides
// a denial without a write.
func (e *Engine) once(ctx context.Context, c Conn, prog int, cmd *Command) (any, error) {
	if e.mode.Load() != modeScripts {
		loads := e.loads.Load()
		cmd.Name, cmd.Script = "FCALL", e.src.functions[prog]
		reply, err := c.Eval(ctx, cmd)
		if err == nil {
			e.mode.CompareAndSwap(modeUnknown, modeFunctions)
			return reply, nil
		}
		msg, isReply := replyMsg(err)
		switch {
		case !isReply:
			return nil, err
		case notFound(err):
			switch lerr := e.load(ctx, c, loads); {
			case lerr == nil:
				reply, err = c.Eval(ctx, cmd)
				if !notFound(err) {
					return reply, err
				}
				// Flushed again since the load: this call runs as a
				// script, which carries its own source.
			case !unsupported(lerr):
				return nil, lerr
			default:
				e.mode.Store(modeScripts)
			}
		case unsupported(err):
			e.mode.Store(modeScripts)
		case !strings.HasPrefix(msg, "OOM "):
			return nil, err
		}
	}
	sc := e.src.scripts[prog]
	cmd.Name, cmd.Script = "EVALSHA", sc.sha
	reply, err := c.Eval(ctx, cmd)
	if msg, ok := replyMsg(err); ok && strings.HasPrefix(msg, "NOSCRIPT") {
		cmd.Name, cmd.Script = "EVAL", sc.src
		reply, err = c.Eval(ctx, cmd)
	}
	return reply, err
}

// notFound reports whether err is Redis's reply to an FCALL of a function
// it does not have (a new or restarted node, FUNCTION FLUSH).
func notFound(err error) bool {
	msg, ok := replyMsg(err)
	return ok && strings.Contains(msg, "Function not found")
}

// load loads the library on every primary unless another call did since
// loads (the count of loads when the caller's FCALL was sent).
func (e *Engine) load(ctx context.Context, c Conn, loads int64) error {
	e.loadMu.Lock()
	defer e.loadMu.Unlock()
	if e.loads.Load() != loads {
		return nil
	}
	if err := c.LoadLibrary(ctx, e.src.library); err != nil {
		return err
	}
	e.loads.Add(1)
	return nil
}

// unsupported reports whether err says the server has no Functions, or
// refuses them to this user: the engine then runs scripts. A refusal of the
// keys is not one: scripts would be refused them too.
func unsupported(err error) bool {
	msg, ok := replyMsg(err)
	return ok && (strings.HasPrefix(msg, "ERR unknown command") || strings.HasPrefix(msg, "ERR unknown subcommand") ||
		strings.HasPrefix(msg, "NOPERM") && !keyRefusal(msg))
}

// neverRan reports whether err proves that Redis did not run the call: the
// client says it never sent it (NotSent), a dial failed, or a node answered
// that it could not take commands.
func neverRan(err error) bool {
	var ns *notSent
	if errors.As(err, &ns) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	msg, ok := replyMsg(err)
	if !ok {
		return false
	}
	for _, prefix := range []string{"LOADING", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "BUSY "} {
		if strings.HasPrefix(msg, prefix) {
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
