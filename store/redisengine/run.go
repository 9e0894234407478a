package redisengine

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"
)

// attempts bounds how often run sends a call that provably did not run.
const attempts = 3

// A RunError is the failure of a call the engine gave up on: Err is the last
// failure; Ended reports that ctx ended before another attempt. Its text is
// Err's. It is not changed once made, so it may be shared.
type RunError struct {
	Err   error
	Ended bool
}

// Error implements error.
func (e *RunError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *RunError) Unwrap() error { return e.Err }

// run runs program prog with cmd through c, sending it again, 10 and then 20
// ms later within ctx, while a failure proves it never ran (neverRan).
// Errors are *RunErrors.
func (e *Engine) run(ctx context.Context, c Conn, prog int, cmd *Command) (any, error) {
	var err error
	for attempt := range attempts {
		if attempt > 0 {
			t := time.NewTimer(time.Duration(attempt) * 10 * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, &RunError{Err: err, Ended: true}
			}
		}
		var reply any
		if reply, err = e.once(ctx, c, prog, cmd); err == nil {
			return reply, nil
		}
		if !neverRan(err) {
			break
		}
	}
	return nil, &RunError{Err: err}
}

// once sends the call as a function where the server has Functions, else as
// a script, and answers the replies that prove it did not run: "Function not
// found", NOSCRIPT, an unknown FCALL and OOM (docs/architecture.md,
// "Functions, and scripts where Redis has none").
func (e *Engine) once(ctx context.Context, c Conn, prog int, cmd *Command) (any, error) {
	if !e.scripts.Load() {
		loads := e.loads.Load()
		cmd.Name, cmd.Script = "FCALL", e.src.functions[prog]
		reply, err := c.Eval(ctx, cmd)
		if err == nil {
			return reply, nil
		}
		switch {
		case notFound(err):
			switch lerr := e.load(ctx, c, loads); {
			case lerr == nil:
				reply, err = c.Eval(ctx, cmd)
				if !notFound(err) {
					return reply, err
				}
				// flushed again since the load: run the script
			case !unsupported(lerr):
				return nil, lerr
			default:
				e.scripts.Store(true)
			}
		case unsupported(err):
			e.scripts.Store(true)
		case !replyHas(err, "OOM "): // not a reply that proves the call did not run
			return nil, err
		}
	}
	sc := e.src.scripts[prog]
	cmd.Name, cmd.Script = "EVALSHA", sc.sha
	reply, err := c.Eval(ctx, cmd)
	if replyHas(err, "NOSCRIPT") {
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

// load loads the library unless another call did since loads, the count
// when the caller's FCALL was sent.
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

// unsupported reports whether err says the server has no Functions or
// refuses them to this user (not the keys, which scripts would be refused).
func unsupported(err error) bool {
	msg, ok := replyMsg(err)
	return ok && (strings.HasPrefix(msg, "ERR unknown command") || strings.HasPrefix(msg, "ERR unknown subcommand") ||
		strings.HasPrefix(msg, "NOPERM") && !keyRefusal(msg))
}

// neverRan reports whether err proves that Redis did not run the call.
func neverRan(err error) bool {
	var ns *notSent
	var op *net.OpError
	return errors.As(err, &ns) || errors.As(err, &op) && op.Op == "dial" ||
		replyHas(err, "LOADING", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "BUSY ")
}
