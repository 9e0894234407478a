package redisengine

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
)

// A Conn is what the engine needs of a Redis client. Implementations must be
// safe for concurrent use.
type Conn interface {
	// Eval sends cmd once (no client retries: once written, it may have
	// run) to the node that serves its keys, bounded by ctx, and returns its
	// reply normalised: integers as int64, strings as string, arrays as []any
	// of these, a null as nil; a Conn may return an array of integers as
	// []int64 when cmd.IntegerReply(). An error reply is a *ReplyError; a
	// failure that proves cmd was never written is wrapped with NotSent.
	// Eval must not keep cmd, or pointers into it, after it returns.
	Eval(ctx context.Context, cmd *Command) (any, error)
	// LoadLibrary runs FUNCTION LOAD REPLACE code on every primary node,
	// bounded by ctx; error replies are *ReplyErrors.
	LoadLibrary(ctx context.Context, code string) error
}

// A Command is one script call, which the engine builds and a Conn only
// reads, until Eval returns, from the goroutine that called Eval. The zero
// Command has no arguments.
type Command struct {
	// Name is the command: FCALL, EVALSHA or EVAL.
	Name string
	// Script is the function's name, the script's SHA-1 or its source.
	Script string
	// Keys are the keys the call touches, all in one cluster slot.
	Keys []string

	ints   bool      // the reply is an array of integers (see IntegerReply)
	head   []string  // arguments of this call (cost and mode, or a whole ARGV)
	static []string  // arguments prepared once per set of limits
	tail   []string  // after static: a Suppressed call's draw
	k      [2]string // room for the keys of a call of one or two keys
	h      [4]string // room for head
	t      [1]string // room for tail
}

// IntegerReply reports whether the reply to c, unless an error reply, is an
// array of integers, which a Conn may read as []int64.
func (c *Command) IntegerReply() bool { return c.ints }

// NumArgs returns the number of arguments after the keys.
func (c *Command) NumArgs() int { return len(c.head) + len(c.static) + len(c.tail) }

// Args yields a pointer to each argument after the keys, in order, unchanged
// until Eval returns: go-redis writes a *string as its string, so nothing is
// copied or boxed.
func (c *Command) Args() iter.Seq[*string] {
	return func(yield func(*string) bool) {
		for _, part := range [...][]string{c.head, c.static, c.tail} {
			for i := range part {
				if !yield(&part[i]) {
					return
				}
			}
		}
	}
}

// AppendArgs appends the arguments after the keys to dst and returns it.
func (c *Command) AppendArgs(dst []string) []string {
	dst = append(dst, c.head...)
	dst = append(dst, c.static...)
	return append(dst, c.tail...)
}

// A ReplyError is an error reply of Redis, as a Conn reports it: Msg is the
// reply's text, which the engine reads; Err, when set, is the client's own
// error for it, which Error and Unwrap return. It is not changed once made,
// so it may be shared.
type ReplyError struct {
	Msg string
	Err error
}

// Error implements error.
func (e *ReplyError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the client's error.
func (e *ReplyError) Unwrap() error { return e.Err }

// NotSent wraps err, a failure that proves a command never reached Redis (a
// failed dial, no free connection), so that the engine may send it again.
// Its text is err's, and it unwraps to err.
func NotSent(err error) error {
	if err == nil {
		return nil
	}
	return &notSent{err}
}

type notSent struct{ err error }

func (e *notSent) Error() string { return e.err.Error() }
func (e *notSent) Unwrap() error { return e.err }

// replyMsg returns the text of err's error reply, if it is one.
func replyMsg(err error) (string, bool) {
	var r *ReplyError
	if errors.As(err, &r) {
		return r.Msg, true
	}
	return "", false
}

// replyHas reports whether err is an error reply that starts with one of
// prefixes.
func replyHas(err error, prefixes ...string) bool {
	msg, ok := replyMsg(err)
	return ok && slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(msg, p) })
}
