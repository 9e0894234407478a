package redisengine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// ProbeSubject returns the i-th subject a store's Ping may decide about (one
// per master); it is its own hash tag, so "{subject}" routes as its keys do.
func ProbeSubject(i int) string { return "ratekit-ping-" + strconv.Itoa(i) }

// A ProbeStore is a store Probe can try: both stores of the kit.
type ProbeStore = ratekit.Store

// Probe tries, for a store's Ping, every kind of call the engine makes about
// subject through s, a store on e: a Reserve and its refund, three Takes
// (admitted, denied into a block, blocked), a Peek and a Reset; its keys
// live a second at most. A refusal by Redis's access control comes back
// with its fix; the store prefixes its name.
func (e *Engine) Probe(ctx context.Context, s ProbeStore, subject string) error {
	err := probe(ctx, s, subject)
	if err == nil {
		return nil
	}
	if hint := permissionHint(err, e.prefix); hint != "" {
		return fmt.Errorf("Redis refuses the store's calls: %s (%w)", hint, err)
	}
	return fmt.Errorf("a probe decision failed: %w", err)
}

// probe makes Probe's calls, on limits of quota 1 in one second that run
// every command of a decision.
func probe(ctx context.Context, s ProbeStore, subject string) error {
	p, err := s.Prepare([]ratekit.Limit{
		ratekit.FixedWindow(1, time.Second).Named("ping-fixed").Block(time.Second),
		ratekit.SlidingWindow(1, time.Second).Named("ping-sliding"),
		ratekit.SlidingLog(1, time.Second).Named("ping-log"),
		ratekit.GCRA(1, time.Second, 1).Named("ping-gcra"),
	})
	if err != nil {
		return err
	}
	st, ok := p.(store.Settler)
	if !ok {
		return errors.New("the store cannot settle")
	}
	d, err := st.Reserve(ctx, subject, 1)
	if err != nil {
		return err
	}
	if d.Receipt != nil {
		if err := st.Settle(ctx, subject, d.Receipt, 0); err != nil {
			return err
		}
	}
	for range 3 {
		if _, err := p.Take(ctx, subject, 1); err != nil {
			return err
		}
	}
	if _, err := p.Peek(ctx, subject); err != nil {
		return err
	}
	return p.Reset(ctx, subject)
}

// Commands lists the Redis commands the engine's programs run, for the
// error that says which a user lacks.
const Commands = "GET SET DEL PTTL PEXPIRE INCRBY DECRBY TOUCH TIME HGET HGETALL HMGET HSET HKEYS HDEL HINCRBY ZADD ZCOUNT ZRANGE ZRANGEBYSCORE ZREM ZREMRANGEBYSCORE ZSCORE"

// permissionHint returns how to fix err when it is Redis's access control
// refusing a call to a store whose keys start with prefix, else "".
func permissionHint(err error, prefix string) string {
	msg := err.Error()
	switch {
	case keyRefusal(msg):
		return fmt.Sprintf("the Redis user may not use the store's keys: allow them with the key pattern ~%s:* (ACL SETUSER <user> ~%s:*)", prefix, prefix)
	case strings.Contains(msg, "can't run this command") || strings.Contains(msg, "ACL failure in script"):
		return "the Redis user may not run a command of the store's program: allow +@read +@write +time, or at least " + Commands
	case strings.Contains(msg, "NOPERM"):
		return "the Redis user may not run the store's program: allow +fcall and +function|load (Redis 7 Functions), " +
			"or +evalsha and +eval where Functions are refused (all are in +@scripting)"
	}
	return ""
}

// keyRefusal reports whether msg is Redis refusing a key to the user (the
// texts of 7.0 and of 7.2 and later).
func keyRefusal(msg string) bool {
	return strings.Contains(msg, "NOPERM") &&
		(strings.Contains(msg, "one of the keys") || strings.Contains(msg, "access a key"))
}
