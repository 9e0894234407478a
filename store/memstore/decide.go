package memstore

import (
	"strconv"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// pending is what one call's limit said and would store.
type pending struct {
	res  algo.Result
	next algo.State
	keep bool // an admitted call stores next: a charge above 0, or a Holds limit's reserve
}

// decide checks the limits of p for key and, when charge is set and every
// limit admits cost, charges them all, writing the Decision to d (left zero
// on an error) and the charge's Receipt to rc when given. A charge takes a
// slot in each Holds limit whatever its cost (0 too); other limits are
// charged only a cost above 0. Writing to the caller's result instead of
// returning a copy saves about 15% of BenchmarkTake/fixed/10k-keys.
func (p *prepared) decide(d *ratekit.Decision, key string, cost int64, charge bool, rc *ratekit.Receipt) error {
	if key == "" {
		return ratekit.ErrEmptyKey
	}
	if err := store.CheckCost(cost); err != nil {
		return err
	}
	if p.err != nil {
		return p.err
	}
	if len(p.rules) == 1 { // allocates nothing once the subject has state
		var st [1]ratekit.LimitState
		p.s.run(key, p, cost, charge, st[:], rc)
		*d = store.Single(st[0])
		return nil
	}
	states := make([]ratekit.LimitState, len(p.rules))
	p.s.run(key, p, cost, charge, states, rc)
	*d = store.Combine(states)
	return nil
}

// run is decide under the shard's lock, writing each limit's state to
// states; what the call would store goes to the shard's scratch (pend).
func (s *Store) run(key string, pr *prepared, cost int64, charge bool, states []ratekit.LimitState, rc *ratekit.Receipt) {
	rules := pr.rules
	hold := charge // slots are taken whatever the cost
	charge = charge && cost > 0
	c := algo.Call{Cost: cost, Now: s.clock()}
	if pr.caps&algo.Draws != 0 {
		c.Draw = store.DrawBits(s.random()) // one per call, as redisstore
	}
	if pr.caps&algo.Holds != 0 && hold {
		c.Lease = s.leases.Add(1)
	}
	nowMS := c.Now / 1000
	sub, sh := s.lock(key, nowMS)
	defer sh.mu.Unlock()
	rules = s.inForce(sh, sub, rules, c.Now)
	if cap(sh.pend) < len(rules) {
		sh.pend = make([]pending, len(rules))
	}
	p := sh.pend[:len(rules)]
	clear(p)
	slots := sh.subjects[sub]
	allowed := true
	for i := range rules {
		p[i].keep = charge || rules[i].caps&algo.Holds != 0 && hold
		slots = s.checkLimit(sh, sub, slots, &rules[i], &p[i], &states[i], c)
		allowed = allowed && states[i].Allowed
	}
	switch {
	case !hold:
	case allowed:
		if missing(slots, rules, p) > 0 { // a subject with state for every limit needs no room
			if !s.room(sh, sub, rules, p, nowMS) {
				refuse(states, sh, nowMS)
				return
			}
			slots = sh.subjects[sub] // room may sweep or evict
		}
		for i := range p {
			if r := &rules[i]; p[i].keep && (r.caps&algo.Draws == 0 || r.alg.Commit(&p[i].next, true, cost)) {
				slots = sh.setState(sub, slots, r.spec.ID, &p[i].next, states[i].Remaining == 0)
			}
		}
		if rc != nil {
			rc.Cost, rc.At = cost, c.Now
			rc.Ends, rc.Held = make([]int64, len(p)), make([]int64, len(p))
			for i := range p {
				if r := &rules[i]; cost > 0 && r.caps&algo.Settles != 0 {
					rc.Ends[i], rc.Held[i] = r.alg.End(&r.spec, &p[i].next, c.Now), cost
				}
			}
			if c.Lease != 0 {
				rc.Lease = strconv.FormatInt(c.Lease, 10)
			}
		}
	default:
		// Nothing is charged: report each admitting limit as it stands. A
		// Draws limit counts the call anyway, as declined (unless that
		// needs a new entry and the store is full: the call stays denied).
		for i := range p {
			r := &rules[i]
			switch {
			case r.caps&algo.Draws != 0:
				if r.alg.Commit(&p[i].next, false, cost) {
					ok := s.room(sh, sub, rules[i:i+1], p[i:i+1], nowMS) // may sweep or evict: read the slots again
					if slots = sh.subjects[sub]; ok {
						slots = sh.setState(sub, slots, r.spec.ID, &p[i].next, true)
					}
				}
			case states[i].Allowed:
				p[i] = pending{}
				slots = s.checkLimit(sh, sub, slots, r, &p[i], &states[i], c)
			default:
				if j := find(slots, r.spec.ID); j >= 0 {
					slots[j].full = true // a live denial: never evicted
				}
			}
		}
	}
}

// checkLimit decides r into p and st, returning sub's slots as they then
// are. As in the engine, a live block denies for the longer of it and the
// counters' wait; a charging call's denial (not unsatisfiable, not drawn) starts one.
func (s *Store) checkLimit(sh *shard, sub string, slots []slot, r *rule, p *pending, st *ratekit.LimitState, c algo.Call) []slot {
	nowMS := c.Now / 1000
	i, e := live(slots, r.spec.ID, nowMS)
	if e != nil {
		r.alg.Normalize(&r.spec, e, c.Now)
	}
	block := r.spec.Block.Milliseconds()
	if block > 0 && i >= 0 && slots[i].blockMS > nowMS {
		left := ms(slots[i].blockMS - nowMS)
		if e != nil { // what the counters say, as things stand
			r.alg.Decide(&r.spec, e, c, &p.res, &p.next)
		}
		*st = ratekit.LimitState{Limit: r.limit, ResetAfter: max(left, p.res.ResetAfter), RetryAfter: max(left, p.res.RetryAfter), Blocked: true}
		p.res, p.next = algo.Result{}, algo.State{}
		return slots
	}
	c.Charge = p.keep
	r.alg.Decide(&r.spec, e, c, &p.res, &p.next)
	res := &p.res
	*st = ratekit.LimitState{
		Limit: r.limit, Allowed: res.Allowed, Unsatisfiable: res.Unsatisfiable, Remaining: res.Remaining, Suppression: res.Suppression,
		ResetAfter: res.ResetAfter, RetryAfter: res.RetryAfter, EffectiveWindow: res.EffectiveWindow, Delay: res.Delay,
	}
	drawn := res.Suppression > 0 && res.Suppression < 1 // declined by a draw: no block
	if block > 0 && !res.Allowed && !res.Unsatisfiable && !drawn && c.Charge {
		slots = s.setBlock(sh, sub, slots, r.spec.ID, nowMS+block)
		st.RetryAfter, st.ResetAfter, st.Blocked = max(res.RetryAfter, ms(block)), max(res.ResetAfter, ms(block)), true
		st.EffectiveWindow = 0 // nothing passes until the block ends
	}
	return slots
}

// refuse turns states into the denial of a call that found no room (see
// WithMaxEntries): nothing remaining, until the earliest expiry in sh (at
// least 1 ms, at most 1 s: room may come from other shards' sweep).
func refuse(states []ratekit.LimitState, sh *shard, nowMS int64) {
	wait := ms(min(max(sh.minExpireMS-nowMS, 1), 1000))
	for i := range states {
		st := &states[i]
		st.Allowed, st.Remaining, st.Delay = false, 0, 0
		st.RetryAfter = max(st.RetryAfter, wait)
		st.ResetAfter = max(st.ResetAfter, wait)
		st.EffectiveWindow = st.RetryAfter // nothing passes before it
	}
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
