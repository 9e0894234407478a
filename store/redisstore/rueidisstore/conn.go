package rueidisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit/store"
	"github.com/ratekit/ratekit/store/redisengine"
)

// conn is the store as the engine's redisengine.Conn.
type conn Store

var (
	_ redisengine.Conn = (*conn)(nil)
	_ store.Overrider  = (*Store)(nil)
)

// Eval implements redisengine.Conn. The command is built with
// Builder.Arbitrary and so carries no retryable tag: rueidis never sends it
// twice. Concurrent calls share connections, pipelined by rueidis.
func (c *conn) Eval(ctx context.Context, cmd *redisengine.Command) (any, error) {
	var buf [24]string
	args := cmd.AppendArgs(buf[:0])
	b := c.client.B().Arbitrary(cmd.Name, cmd.Script, strconv.Itoa(len(cmd.Keys))).Keys(cmd.Keys...).Args(args...)
	res := c.client.Do(ctx, b.Build())
	var reply any
	var err error
	if cmd.IntegerReply() {
		reply, err = res.AsIntSlice() // no element boxed
	} else {
		reply, err = res.ToAny()
	}
	if err != nil {
		return nil, classify(err)
	}
	return reply, nil
}

// LoadLibrary implements redisengine.Conn: FUNCTION LOAD REPLACE on every
// node the client knows; a replica's READONLY reply is passed over (its
// master's library reaches it by replication).
func (c *conn) LoadLibrary(ctx context.Context, code string) error {
	var errs []error
	for _, node := range c.client.Nodes() {
		err := node.Do(ctx, node.B().FunctionLoad().Replace().FunctionCode(code).Build()).Error()
		if r, ok := rueidis.IsRedisErr(err); ok && strings.HasPrefix(r.Error(), "READONLY") {
			continue
		}
		if err != nil {
			errs = append(errs, classify(err))
		}
	}
	return errors.Join(errs...)
}

// classify tells the engine what err is: an error reply of Redis, or
// another failure.
func classify(err error) error {
	if r, ok := rueidis.IsRedisErr(err); ok {
		return &redisengine.ReplyError{Msg: r.Error(), Err: err}
	}
	return err
}
