package redisengine

import (
	"strconv"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// replyFields is the number of integers the engine returns per limit.
const replyFields = 7

// parseDecision checks the engine's reply element by element and turns it
// into a Decision: one state per limit, combined as store.Combine does (a
// call about one limit makes no States slice). A reply of any other shape is
// an error, never a panic.
func (e *Engine) parseDecision(reply any, limits []ratekit.Limit) (ratekit.Decision, error) {
	n := len(limits)
	if ints, ok := reply.([]int64); ok { // read by a Conn as integers (Command.IntegerReply)
		if len(ints) != replyFields*n {
			return ratekit.Decision{}, e.errorf("unexpected reply of %d integers for %d limits", len(ints), n)
		}
		return combine(limits, func(i int) (ratekit.LimitState, error) {
			return e.state([replyFields]int64(ints[replyFields*i:]), limits[i])
		})
	}
	vals, ok := reply.([]any)
	factors := ok && len(vals) == (replyFields+1)*n // suppression factors follow the integers
	if !ok || len(vals) != replyFields*n && !factors {
		return ratekit.Decision{}, e.errorf("unexpected reply %T of %d elements for %d limits", reply, len(vals), n)
	}
	return combine(limits, func(i int) (ratekit.LimitState, error) {
		return e.parseState(vals, i, n, limits[i], factors)
	})
}

// combine makes the Decision of limits from the state of each, which
// state(i) returns.
func combine(limits []ratekit.Limit, state func(i int) (ratekit.LimitState, error)) (ratekit.Decision, error) {
	if len(limits) == 1 {
		st, err := state(0)
		return store.Single(st), err
	}
	states := make([]ratekit.LimitState, len(limits))
	for i := range limits {
		st, err := state(i)
		if err != nil {
			return ratekit.Decision{}, err
		}
		states[i] = st
	}
	return store.Combine(states), nil
}

// parseState checks and reads the part of the reply vals about limit i, l,
// of n.
func (e *Engine) parseState(vals []any, i, n int, l ratekit.Limit, factors bool) (ratekit.LimitState, error) {
	var f [replyFields]int64
	for j := range f {
		n, ok := vals[replyFields*i+j].(int64)
		if !ok {
			return ratekit.LimitState{}, e.errorf("reply element %d is %T, want an integer", replyFields*i+j, vals[replyFields*i+j])
		}
		f[j] = n
	}
	st, err := e.state(f, l)
	if err != nil || !factors {
		return st, err
	}
	el := vals[replyFields*n+i]
	str, ok := el.(string)
	x, err := strconv.ParseFloat(str, 64)
	if !ok || err != nil || !(x >= 0 && x <= 1) {
		return ratekit.LimitState{}, e.errorf("suppression factor %v for limit %q is not a number in [0, 1]", el, l.Name())
	}
	st.Suppression = x
	return st, nil
}

// state checks the seven integers f of limit l's reply and turns them into
// its state.
func (e *Engine) state(f [replyFields]int64, l ratekit.Limit) (ratekit.LimitState, error) {
	if f[0] != 0 && f[0] != 1 || f[1] < 0 || f[2] < 0 || f[3] < 0 || f[5] < 0 || f[6] < 0 || f[4] < 0 || f[4] > 7 || f[0] == 1 && f[4] != 0 { // flags: 1 unsatisfiable, 2 blocked, 4 declined by a draw
		return ratekit.LimitState{}, e.errorf("reply %v for limit %q is out of range", f, l.Name())
	}
	return ratekit.LimitState{
		Limit:           l,
		Allowed:         f[0] == 1,
		Remaining:       f[1],
		ResetAfter:      time.Duration(f[2]) * time.Microsecond,
		RetryAfter:      time.Duration(f[3]) * time.Microsecond,
		EffectiveWindow: time.Duration(f[6]) * time.Microsecond,
		Unsatisfiable:   f[4]&1 != 0,
		Blocked:         f[4]&2 != 0,
		Delay:           time.Duration(f[5]) * time.Microsecond,
	}, nil
}
