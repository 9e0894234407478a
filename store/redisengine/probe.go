package redisengine

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
)

// ProbeSubject is the subject a store's Ping decides about, changing
// nothing: its keys are under the store's prefix like every other.
const ProbeSubject = "ratekit-ping"

// ProbeLimits returns the limits of Ping's probe: one of each built-in
// algorithm, with a block, so that a Peek of them runs every read the
// engine's decisions make.
func ProbeLimits() []ratekit.Limit {
	return []ratekit.Limit{
		ratekit.FixedWindow(1, time.Second).Named("ping-fixed").Block(time.Second),
		ratekit.SlidingWindow(1, time.Second).Named("ping-sliding"),
		ratekit.SlidingLog(1, time.Second).Named("ping-log"),
		ratekit.GCRA(1, time.Second, 1).Named("ping-gcra"),
	}
}

// Commands lists the Redis commands the engine's programs run, for the
// error that says which a user lacks.
const Commands = "GET SET DEL PTTL PEXPIRE INCRBY DECRBY TOUCH TIME HGETALL HMGET HSET HKEYS HDEL HINCRBY ZADD ZCOUNT ZRANGE ZRANGEBYSCORE ZREM ZREMRANGEBYRANK ZREMRANGEBYSCORE"

// PermissionHint returns how to fix err when it is Redis's access control
// refusing a call of the engine, for a store whose keys start with prefix,
// or "" when it is something else.
func PermissionHint(err error, prefix string) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "NOPERM") && strings.Contains(msg, "key"):
		return fmt.Sprintf("the Redis user may not use the store's keys: allow them with the key pattern ~%s:* (ACL SETUSER <user> ~%s:*)", prefix, prefix)
	case strings.Contains(msg, "NOPERM"):
		return "the Redis user may not run the store's program: allow +fcall and +function|load (Redis 7 Functions), " +
			"or +evalsha and +eval where Functions are refused (all are in +@scripting)"
	case strings.Contains(msg, "can't run this command"):
		return "the Redis user may not run a command of the store's program: allow +@read +@write +time, or at least " + Commands
	}
	return ""
}

// Prefix returns the first segment of every key of e.
func (e *Engine) Prefix() string { return e.prefix }
