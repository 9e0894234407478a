package redisengine

import (
	"slices"
	"strconv"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// replyFields is the number of integers the engine returns per limit.
const replyFields = 7

// integers checks that reply is n integers, or (as []any) n integers then m
// more elements, and returns the integers and those elements. A reply of
// any other shape is an error, never a panic.
func (e *Engine) integers(reply any, n, m int, what string) ([]int64, []any, error) {
	switch r := reply.(type) {
	case []int64: // read by a Conn as integers (Command.IntegerReply)
		if len(r) == n {
			return r, nil, nil
		}
	case []any:
		if len(r) == n || m > 0 && len(r) == n+m {
			ints := make([]int64, n)
			for i := range ints {
				v, ok := r[i].(int64)
				if !ok {
					return nil, nil, e.errorf("%s reply element %d is %T, want an integer", what, i, r[i])
				}
				ints[i] = v
			}
			return ints, r[n:], nil
		}
	}
	return nil, nil, e.errorf("unexpected %s reply %T for %d integers", what, reply, n)
}

// parseDecision checks the reply of a decide call and turns it into a
// Decision.
func (p *prepared) parseDecision(reply any) (ratekit.Decision, error) {
	ints, factors, err := p.e.decideInts(reply, replyFields*len(p.limits), len(p.limits), "decide")
	if err != nil {
		return ratekit.Decision{}, err
	}
	limits, err := p.inForce(ints[replyFields*len(p.limits):])
	if err != nil {
		return ratekit.Decision{}, err
	}
	return p.e.decision(ints, factors, limits)
}

// decideInts checks that reply is n integers, then the override sections
// (an index and algo.NumbersLen integers each), then, as []any, nothing or
// m more elements (suppression factors); it returns the integers and those
// elements. A reply of any other shape is an error, never a panic.
func (e *Engine) decideInts(reply any, n, m int, what string) ([]int64, []any, error) {
	const section = 1 + algo.NumbersLen
	switch r := reply.(type) {
	case []int64: // read by a Conn as integers (Command.IntegerReply)
		if len(r) >= n && (len(r)-n)%section == 0 {
			return r, nil, nil
		}
	case []any:
		k := 0
		for k < len(r) {
			if _, ok := r[k].(int64); !ok {
				break
			}
			k++
		}
		if k >= n && (k-n)%section == 0 && (k == len(r) || m > 0 && len(r) == k+m) {
			ints := make([]int64, k)
			for i := range ints {
				ints[i] = r[i].(int64)
			}
			return ints, r[k:], nil
		}
	}
	return nil, nil, e.errorf("unexpected %s reply %T for %d integers", what, reply, n)
}

// inForce returns the limits in force by the override sections of a
// reply, secs: p's limits, or copies with other numbers where an override
// decided (made once per limit and numbers).
func (p *prepared) inForce(secs []int64) ([]ratekit.Limit, error) {
	if len(secs) == 0 {
		return p.limits, nil
	}
	limits := slices.Clone(p.limits)
	for ; len(secs) > 0; secs = secs[1+algo.NumbersLen:] {
		i := int(secs[0]) - 1
		if i < 0 || i >= len(limits) {
			return nil, p.e.errorf("reply names override of limit %d of %d", i+1, len(limits))
		}
		k := overridden{i, algo.Numbers(secs[1 : 1+algo.NumbersLen])}
		l, ok := p.overrides.Load(k)
		if !ok {
			sp := algo.Spec(limits[i].Spec())
			k.n.Apply(&sp)
			in, err := limits[i].With(ratekit.Spec(sp))
			if err != nil {
				return nil, p.e.errorf("override of limit %q in Redis: %w", limits[i].Name(), err)
			}
			if p.nOverrides.Add(1) > maxOverridesKept { // a bound, not a cache policy: start over
				p.overrides.Clear()
				p.nOverrides.Store(0)
			}
			l, _ = p.overrides.LoadOrStore(k, in)
		}
		limits[i] = l.(ratekit.Limit)
	}
	return limits, nil
}

// maxOverridesKept bounds the limits in force a prepared set keeps made.
const maxOverridesKept = 1024

// overridden names the limit in force of a prepared set's limit i under
// numbers n.
type overridden struct {
	i int
	n algo.Numbers
}

// decision makes the Decision of limits from their integers and, when any
// limit reports one, a suppression factor each, combined as store.Combine
// does (a call about one limit makes no States slice).
func (e *Engine) decision(ints []int64, factors []any, limits []ratekit.Limit) (ratekit.Decision, error) {
	if len(limits) == 1 {
		st, err := e.state(ints, factors, 0, limits[0])
		return store.Single(st), err
	}
	states := make([]ratekit.LimitState, len(limits))
	for i, l := range limits {
		st, err := e.state(ints, factors, i, l)
		if err != nil {
			return ratekit.Decision{}, err
		}
		states[i] = st
	}
	return store.Combine(states), nil
}

// state checks the seven integers of limit i, l, and its factor if there
// are factors, and turns them into its state.
func (e *Engine) state(ints []int64, factors []any, i int, l ratekit.Limit) (ratekit.LimitState, error) {
	f := ints[replyFields*i : replyFields*(i+1)]
	if f[0] != 0 && f[0] != 1 || f[1] < 0 || f[2] < 0 || f[3] < 0 || f[5] < 0 || f[6] < 0 || f[4] < 0 || f[4] > 7 || f[0] == 1 && f[4] != 0 { // flags: 1 unsatisfiable, 2 blocked, 4 declined by a draw
		return ratekit.LimitState{}, e.errorf("reply %v for limit %q is out of range", f, l.Name())
	}
	st := ratekit.LimitState{
		Limit:           l,
		Allowed:         f[0] == 1,
		Remaining:       f[1],
		ResetAfter:      time.Duration(f[2]) * time.Microsecond,
		RetryAfter:      time.Duration(f[3]) * time.Microsecond,
		EffectiveWindow: time.Duration(f[6]) * time.Microsecond,
		Unsatisfiable:   f[4]&1 != 0,
		Blocked:         f[4]&2 != 0,
		Delay:           time.Duration(f[5]) * time.Microsecond,
	}
	if len(factors) > 0 {
		str, ok := factors[i].(string)
		x, err := strconv.ParseFloat(str, 64)
		if !ok || err != nil || !(x >= 0 && x <= 1) {
			return ratekit.LimitState{}, e.errorf("suppression factor %v for limit %q is not a number in [0, 1]", factors[i], l.Name())
		}
		st.Suppression = x
	}
	return st, nil
}
