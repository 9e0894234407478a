package redisengine

import (
	"context"
	"strconv"
	"time"

	"github.com/ratekit/ratekit/lockout"
)

var lockoutOps = map[lockout.Op]string{
	lockout.Check: "check", lockout.Attempt: "attempt", lockout.Refund: "refund", lockout.Reset: "reset",
}

// Lockout implements lockout.Store through c in one call (lua/lockout.lua):
// a log of attempts under <prefix>:{<tag>}:lockout:<id> and one block key
// per window beside it, all in the subject's slot.
func (e *Engine) Lockout(ctx context.Context, c Conn, key string, p *lockout.Policy, op lockout.Op, attempt string) (lockout.Decision, error) {
	name, ok := lockoutOps[op]
	if !ok {
		return lockout.Decision{}, e.errorf("unknown lockout operation %d", op)
	}
	base, err := e.subjectKey(key, "lockout:"+p.ID())
	if err != nil {
		return lockout.Decision{}, err
	}
	keys := []string{base}
	extend := "0"
	if p.ExtendBlock {
		extend = "1"
	}
	args := []string{name, extend, attempt}
	for i, w := range p.Windows {
		keys = append(keys, base+":block:"+strconv.Itoa(i))
		args = append(args, itoa(w.Attempts), itoa(w.Window.Milliseconds()), itoa(w.Block.Milliseconds()))
	}
	reply, err := e.run(ctx, c, progLockout, &Command{Keys: keys, head: args})
	if err != nil || op == lockout.Reset || op == lockout.Refund {
		return lockout.Decision{}, err
	}
	return e.parseLockout(reply, p)
}

// parseLockout checks the lockout script's reply element by element.
func (e *Engine) parseLockout(reply any, p *lockout.Policy) (lockout.Decision, error) {
	vals, ok := reply.([]any)
	if !ok || len(vals) != 5+len(p.Windows) {
		return lockout.Decision{}, e.errorf("unexpected lockout reply %T", reply)
	}
	ints := make([]int64, len(vals))
	for i, v := range vals {
		n, ok := v.(int64)
		if !ok || n < 0 {
			return lockout.Decision{}, e.errorf("lockout reply element %d is %v", i, v)
		}
		ints[i] = n
	}
	if ints[0] > 1 || ints[1] > int64(len(p.Windows)) || (ints[0] == 0) != (ints[1] > 0) {
		return lockout.Decision{}, e.errorf("lockout reply %v is inconsistent", ints)
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
