package redisengine

import (
	"strconv"
	"time"

	"github.com/ratekit/ratekit"
)

// replyFields is the number of integers the engine returns per limit.
const replyFields = 6

// parseDecision checks the engine's reply element by element and turns it
// into one state per limit. A reply of any other shape is an error, never a
// panic.
func (e *Engine) parseDecision(reply any, limits []ratekit.Limit) ([]ratekit.LimitState, error) {
	vals, ok := reply.([]any)
	factors := ok && len(vals) == (replyFields+1)*len(limits) // suppression factors follow the integers
	if !ok || len(vals) != replyFields*len(limits) && !factors {
		return nil, e.errorf("unexpected reply %T of %d elements for %d limits", reply, len(vals), len(limits))
	}
	states := make([]ratekit.LimitState, len(limits))
	for i, l := range limits {
		var f [replyFields]int64
		for j := range f {
			n, ok := vals[replyFields*i+j].(int64)
			if !ok {
				return nil, e.errorf("reply element %d is %T, want an integer", replyFields*i+j, vals[replyFields*i+j])
			}
			f[j] = n
		}
		if f[0] != 0 && f[0] != 1 || f[1] < 0 || f[2] < 0 || f[3] < 0 || f[5] < 0 || f[4] < 0 || f[4] > 7 || f[0] == 1 && f[4] != 0 { // flags: 1 unsatisfiable, 2 blocked, 4 declined by a draw
			return nil, e.errorf("reply %v for limit %q is out of range", f, l.Name())
		}
		states[i] = ratekit.LimitState{
			Limit:         l,
			Allowed:       f[0] == 1,
			Remaining:     f[1],
			ResetAfter:    time.Duration(f[2]) * time.Microsecond,
			RetryAfter:    time.Duration(f[3]) * time.Microsecond,
			Unsatisfiable: f[4]&1 != 0,
			Blocked:       f[4]&2 != 0,
			Delay:         time.Duration(f[5]) * time.Microsecond,
		}
		if factors {
			el := vals[replyFields*len(limits)+i]
			str, ok := el.(string)
			x, err := strconv.ParseFloat(str, 64)
			if !ok || err != nil || !(x >= 0 && x <= 1) {
				return nil, e.errorf("suppression factor %v for limit %q is not a number in [0, 1]", el, l.Name())
			}
			states[i].Suppression = x
		}
	}
	return states, nil
}
