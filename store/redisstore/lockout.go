package redisstore

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/ratekit/ratekit/lockout"
	"github.com/redis/go-redis/v9"
)

//go:embed lua/lockout.lua
var lockoutSource string

var lockoutScript = &script{src: lockoutSource, sha: redis.NewScript(lockoutSource).Hash()}

var lockoutOps = map[lockout.Op]string{
	lockout.Check: "check", lockout.Attempt: "attempt", lockout.Refund: "refund", lockout.Reset: "reset",
}

// Lockout implements lockout.Store in one script call: a log of
// attempts under <prefix>:{<tag>}:lockout:<id> and one block key per window
// beside it, all in the subject's slot.
func (s *Store) Lockout(ctx context.Context, key string, p *lockout.Policy, op lockout.Op, attempt string) (lockout.Decision, error) {
	t, err := tag(key)
	if err != nil {
		return lockout.Decision{}, err
	}
	name, ok := lockoutOps[op]
	if !ok {
		return lockout.Decision{}, fmt.Errorf("ratekit: redisstore: unknown lockout operation %d", op)
	}
	base := s.prefix + ":{" + t + "}:lockout:" + p.ID()
	keys := []string{base}
	extend := "0"
	if p.ExtendBlock {
		extend = "1"
	}
	args := []any{name, extend, attempt}
	for i, w := range p.Windows {
		keys = append(keys, base+":block:"+strconv.Itoa(i))
		args = append(args, w.Attempts, w.Window.Milliseconds(), w.Block.Milliseconds())
	}
	reply, err := s.run(ctx, lockoutScript, keys, args)
	if err != nil || op == lockout.Reset || op == lockout.Refund {
		return lockout.Decision{}, err
	}
	return parseLockout(reply, p)
}

// parseLockout checks the lockout script's reply element by element.
func parseLockout(reply any, p *lockout.Policy) (lockout.Decision, error) {
	vals, ok := reply.([]any)
	if !ok || len(vals) != 5+len(p.Windows) {
		return lockout.Decision{}, fmt.Errorf("ratekit: redisstore: unexpected lockout reply %T", reply)
	}
	ints := make([]int64, len(vals))
	for i, v := range vals {
		n, ok := v.(int64)
		if !ok || n < 0 {
			return lockout.Decision{}, fmt.Errorf("ratekit: redisstore: lockout reply element %d is %v", i, v)
		}
		ints[i] = n
	}
	if ints[0] > 1 || ints[1] > int64(len(p.Windows)) || (ints[0] == 0) != (ints[1] > 0) {
		return lockout.Decision{}, fmt.Errorf("ratekit: redisstore: lockout reply %v is inconsistent", ints)
	}
	d := lockout.Decision{Allowed: ints[0] == 1, RetryAfter: time.Duration(ints[2]) * time.Microsecond, Counts: ints[5:]}
	if ints[4] > 0 {
		d.Attempt = strconv.FormatInt(ints[3], 10) + ":" + strconv.FormatInt(ints[4], 10)
	}
	if scope := ints[1]; scope > 0 {
		d.Scope, d.Limit = p.Windows[scope-1].Scope, p.Windows[scope-1].Attempts
	}
	return d, nil
}
