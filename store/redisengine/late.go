package redisengine

import (
	"context"
	"errors"
	"strings"
)

// late reports whether err is Redis's refusal of a reserve call that ran
// past the deadline it carried: the call took nothing.
func late(err error) bool {
	msg, ok := replyMsg(err)
	return ok && strings.HasPrefix(msg, "LATE ")
}

// reserveLate answers a reserve call, cmd, that Redis refused as late (err):
// it wrote nothing. When ctx's deadline has passed, the caller has given up
// (or is about to), and the call fails with a context.DeadlineExceeded.
// Otherwise the reply came back in time and Redis ran the call before the
// deadline: the estimate of Redis's clock was too small (its clock stepped
// forward), so it is dropped, and the call is sent again, once, without a
// deadline; *sent becomes the time it was (see offsets).
func (e *Engine) reserveLate(ctx context.Context, c Conn, cmd *Command, err error, sent *int64) (any, error) {
	if d, ok := ctx.Deadline(); !ok || ctx.Err() != nil || e.offset.now() >= e.offset.local(d) {
		var reply *ReplyError
		errors.As(err, &reply) // late(err) found it
		return nil, &RunError{Err: &lateError{reply: reply}, Ended: true}
	}
	e.offset.reset()
	cmd.head[3] = "0"
	*sent = e.offset.now()
	return e.run(ctx, c, progDecide, cmd)
}

// A lateError is the failure of a reserve call that Redis ran after its
// caller's deadline and refused: it took nothing. It is a
// context.DeadlineExceeded; it unwraps to Redis's reply.
type lateError struct{ reply *ReplyError }

func (e *lateError) Error() string        { return e.reply.Error() }
func (e *lateError) Unwrap() error        { return e.reply }
func (e *lateError) Is(target error) bool { return target == context.DeadlineExceeded }
