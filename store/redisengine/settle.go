package redisengine

import (
	"context"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// parseReserve reads the reply of a reserve call sent at sent (the engine's
// time): the decision and, after its integers, the call's time, from which
// it makes the Receipt of an admitted charge and learns Redis's clock.
func (p *prepared) parseReserve(reply any, cost int64, lease string, sent int64) (ratekit.Decision, error) {
	e, n := p.e, len(p.limits)
	ints, factors, err := e.decideInts(reply, replyFields*n+1, n, "reserve")
	if err != nil {
		return ratekit.Decision{}, err
	}
	us := ints[replyFields*n]
	if us <= 0 {
		return ratekit.Decision{}, e.errorf("reserve reply's time %d is not positive", us)
	}
	e.offset.observe(sent, us)
	limits, err := p.inForce(ints[replyFields*n+1:])
	if err != nil {
		return ratekit.Decision{}, err
	}
	d, err := e.decision(ints[:replyFields*n], factors, limits)
	if err != nil || !d.Allowed { // a reserve of cost 0 has a receipt too: it may be settled upward
		return d, err
	}
	rc := &ratekit.Receipt{Cost: cost, At: us, Ends: make([]int64, n), Held: make([]int64, n), Lease: lease}
	for i := range n {
		if cost == 0 {
			break // nothing charged: nothing held
		}
		reset := d.ResetAfter
		if d.States != nil {
			reset = d.States[i].ResetAfter
		}
		switch c := p.caps[i]; {
		case c&algo.EndsOnMS != 0:
			rc.Ends[i], rc.Held[i] = us/1000*1000+reset.Microseconds(), cost
		case c&algo.SettlesAtReset != 0:
			rc.Ends[i], rc.Held[i] = us+reset.Microseconds(), cost
		case c&algo.SettlesAtCall != 0:
			rc.Ends[i], rc.Held[i] = us, cost
		}
	}
	d.Receipt = rc
	return d, nil
}

// settle runs lua/settle.lua in mode for rc, moving its charge to cost,
// and returns its integers: each limit's end and held (settle), or whether
// it holds its lease (renew).
func (p *prepared) settle(ctx context.Context, key string, rc *ratekit.Receipt, mode string, cost int64) (_ []int64, err error) {
	e, n := p.e, len(p.limits)
	start := time.Now()
	defer func() { err = e.explain(ctx, start, err) }()
	if err := store.CheckReceipt(rc, n); err != nil {
		return nil, err
	}
	if cost < 0 { // renew: the charge stands
		cost = rc.Cost
	}
	t, err := Tag(key)
	if err != nil {
		return nil, err
	}
	tail := make([]string, 0, 2*n)
	for _, end := range rc.Ends {
		tail = append(tail, itoa(end))
	}
	for _, held := range rc.Held {
		tail = append(tail, itoa(held))
	}
	cmd := &Command{head: []string{mode, itoa(rc.Cost), itoa(cost), rc.Lease}, static: p.args(start), tail: tail, ints: true}
	cmd.Keys = e.keys(t, p, cmd, true)
	reply, err := e.run(ctx, p.c, progSettle, cmd)
	if p.timed && err != nil && replyHas(err, "STALE ") {
		reply, err = p.restale(ctx, progSettle, cmd, err, start.UnixMicro())
	}
	if err != nil {
		return nil, err
	}
	if mode == "settle" {
		n *= 2 // an end and a held per limit
	}
	r, _, err := e.integers(reply, n, 0, mode)
	return r, err
}
