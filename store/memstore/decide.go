package memstore

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/store"
)

// pending is what one call's limit said and would store.
type pending struct {
	res   algo.Result
	next  algo.State
	lease int64 // a Holds limit: the id of the lease a charge takes
	// keep reports that an admitted call stores next: every limit when
	// the call charges a cost above 0, the Holds limits alone for a
	// reserve of cost 0.
	keep bool
}

// decide checks the limits of p for key and, when charge is set and every
// limit admits cost, charges them all, writing the Decision to d (left zero
// on an error). A call that charges takes a slot in each Holds limit
// whatever its cost (a Reserve of cost 0 too); its other limits are charged
// only a cost above 0. A call with one limit gets a Decision without States
// and allocates nothing once its subject has state.
func (s *Store) decide(d *ratekit.Decision, key string, p *prepared, cost int64, charge bool, rc *ratekit.Receipt) error {
	if key == "" {
		return ratekit.ErrEmptyKey
	}
	if err := store.CheckCost(cost); err != nil {
		return err
	}
	if len(p.rules) == 1 {
		var st [1]ratekit.LimitState
		if err := s.run(key, p, cost, charge, st[:], rc); err != nil {
			return err
		}
		*d = store.Single(st[0])
	} else {
		states := make([]ratekit.LimitState, len(p.rules))
		if err := s.run(key, p, cost, charge, states, rc); err != nil {
			return err
		}
		*d = store.Combine(states)
	}
	d.Receipt = receiptOf(rc, d.Allowed)
	return nil
}

// run decides the limits of pr for key as decide does, writing each
// limit's state to states. What the call would store goes to its shard's
// scratch (shard.pend), heap memory the algorithms may write to without
// costing an allocation per call.
func (s *Store) run(key string, pr *prepared, cost int64, charge bool, states []ratekit.LimitState, rc *ratekit.Receipt) error {
	rules := pr.rules
	hold := charge // slots are taken whatever the cost
	charge = charge && cost > 0
	var draw, lease int64
	if pr.caps&algo.Draws != 0 {
		draw = store.DrawBits(s.random()) // one per call, as redisstore
	}
	if pr.caps&algo.Holds != 0 && hold {
		lease = s.leases.Add(1)
	}
	sub := subject.Key(key)
	nowUS := s.clock()
	nowMS := nowUS / 1000

	sh := s.shard(sub)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if cap(sh.pend) < len(rules) {
		sh.pend = make([]pending, len(rules))
	}
	p := sh.pend[:len(rules)]
	clear(p)
	s.maybeSweep(sh, nowMS)
	slots := sh.subjects[sub]
	allowed := true
	for i := range rules {
		p[i].keep = charge
		if rules[i].caps&algo.Holds != 0 && hold {
			p[i].lease, p[i].keep = lease, true
		}
		var err error
		slots, err = s.checkLimit(sh, sub, slots, &rules[i], &p[i], &states[i], cost, p[i].keep, nowUS, draw)
		if err != nil {
			return err
		}
		allowed = allowed && states[i].Allowed
	}
	switch {
	case !hold:
	case allowed:
		if s.maxEntries > 0 && missing(slots, rules, p) > 0 { // a subject with state for every limit needs no room
			if !s.room(sh, sub, rules, p, nowMS) {
				refuse(states, sh, nowMS)
				return nil
			}
			slots = sh.subjects[sub]
		}
		for i := range p {
			if r := &rules[i]; p[i].keep && (r.caps&algo.Draws == 0 || r.alg.Commit(&p[i].next, true, cost)) {
				slots = sh.setState(sub, slots, r.spec.ID, &p[i].next, states[i].Remaining == 0)
			}
		}
		if rc != nil {
			fillReceipt(rc, rules, p, cost, nowUS, lease)
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
				p[i].res, p[i].next = algo.Result{}, algo.State{}
				slots, _ = s.checkLimit(sh, sub, slots, r, &p[i], &states[i], cost, false, nowUS, draw)
			default:
				sh.markFull(sub, r.spec.ID) // a live denial: never evicted
			}
		}
	}
	return nil
}

// room reports whether the states p keeps of rules may be stored for sub:
// they exist, or the store can admit them (which it then counts).
func (s *Store) room(sh *shard, sub string, rules []rule, p []pending, nowMS int64) bool {
	return s.maxEntries == 0 || s.admit(sh, sub, nowMS, func() int { return missing(sh.subjects[sub], rules, p) })
}

// checkLimit decides one limit, r with its pending p, writing its state to
// st and, when charging and the limit admits the call, the state to store
// to p.next; p.res and p.next are zero. It honours and sets the limit's block as the
// engine does: a live block denies; a denial (not an unsatisfiable one) by
// a limit with a block starts the block when charging. A denial by a block
// waits for the longer of the block and the limit's own counters, which
// decide once the block ends, whether the block starts now or is met
// later. A block is stored even past WithMaxEntries' bound: a denial is
// never forgotten. It returns sub's slots as they then are.
func (s *Store) checkLimit(sh *shard, sub string, slots []slot, r *rule, p *pending, st *ratekit.LimitState, cost int64, charge bool, nowUS, draw int64) ([]slot, error) {
	if r.alg == nil {
		*st = ratekit.LimitState{}
		return slots, fmt.Errorf("ratekit: memstore: algorithm %q is not supported", r.spec.Algorithm)
	}
	nowMS := nowUS / 1000
	i := find(slots, r.spec.ID)
	var e *algo.State // the live state, if any
	if i >= 0 && slots[i].has && slots[i].state.ExpireMS >= nowMS {
		e = &slots[i].state
	}
	block := r.spec.Block.Milliseconds()
	if block > 0 && i >= 0 && slots[i].blocked && slots[i].blockMS > nowMS {
		left := ms(slots[i].blockMS - nowMS)
		if e != nil { // what the counters say, as things stand
			r.alg.Decide(&r.spec, e, algo.Call{Cost: cost, Now: nowUS, Draw: draw}, &p.res, &p.next)
		}
		*st = ratekit.LimitState{Limit: r.limit, ResetAfter: max(left, p.res.ResetAfter), RetryAfter: max(left, p.res.RetryAfter), Blocked: true}
		p.res, p.next = algo.Result{}, algo.State{}
		return slots, nil
	}
	r.alg.Decide(&r.spec, e, algo.Call{Cost: cost, Charge: charge, Now: nowUS, Draw: draw, Lease: p.lease}, &p.res, &p.next)
	res := &p.res
	limitState(st, r.limit, res)
	drawn := res.Suppression > 0 && res.Suppression < 1 // declined by a draw: no block
	if block > 0 && !res.Allowed && !res.Unsatisfiable && !drawn && charge {
		var fresh bool
		slots, fresh = sh.setBlock(sub, slots, r.spec.ID, nowMS+block)
		if fresh && s.maxEntries > 0 {
			s.count.Add(1)
		}
		st.RetryAfter, st.ResetAfter, st.Blocked = max(res.RetryAfter, ms(block)), max(res.ResetAfter, ms(block)), true
		st.EffectiveWindow = 0 // nothing passes until the block ends
	}
	return slots, nil
}

// limitState writes to st the LimitState of l whose algorithm said res.
func limitState(st *ratekit.LimitState, l ratekit.Limit, res *algo.Result) {
	st.Limit, st.Allowed, st.Unsatisfiable, st.Blocked = l, res.Allowed, res.Unsatisfiable, false
	st.Remaining, st.Suppression = res.Remaining, res.Suppression
	st.ResetAfter, st.RetryAfter, st.EffectiveWindow, st.Delay = res.ResetAfter, res.RetryAfter, res.EffectiveWindow, res.Delay
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
