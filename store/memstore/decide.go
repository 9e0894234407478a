package memstore

import (
	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/store"
)

// pending is one limit of a call: its Spec, read once, and the state the
// call would store for it.
type pending struct {
	sp    ratekit.Spec
	next  entry
	lease int64 // InFlight: the id of the lease a charge takes
	// keep reports that an admitted call stores next: every limit when
	// the call charges a cost above 0, the InFlight limits alone for a
	// reserve of cost 0.
	keep bool
}

// decide checks limits for key and, when charge is set and every limit
// admits cost, charges them all, writing the Decision to d (left zero on an
// error). A call that charges takes a slot in each InFlight limit whatever
// its cost (a Reserve of cost 0 too); its other limits are charged only a
// cost above 0. A call with one limit gets a Decision without States and
// allocates nothing once its subject has state.
func (s *Store) decide(d *ratekit.Decision, key string, limits []ratekit.Limit, cost int64, charge bool, rc *ratekit.Receipt) error {
	if key == "" {
		return ratekit.ErrEmptyKey
	}
	if err := store.CheckCost(cost); err != nil {
		return err
	}
	if len(limits) == 1 {
		var st [1]ratekit.LimitState
		var p [1]pending
		if err := s.run(key, limits, cost, charge, st[:], p[:], rc); err != nil {
			return err
		}
		*d = store.Single(st[0])
		d.Receipt = receiptOf(rc, d.Allowed)
		return nil
	}
	states := make([]ratekit.LimitState, len(limits))
	var buf [4]pending
	p := buf[:]
	if len(limits) > len(buf) {
		p = make([]pending, len(limits))
	}
	if err := s.run(key, limits, cost, charge, states, p[:len(limits)], rc); err != nil {
		return err
	}
	*d = store.Combine(states)
	d.Receipt = receiptOf(rc, d.Allowed)
	return nil
}

// run decides limits for key as decide does, writing each limit's state to
// states; p is as long as limits, and zero.
func (s *Store) run(key string, limits []ratekit.Limit, cost int64, charge bool, states []ratekit.LimitState, p []pending, rc *ratekit.Receipt) error {
	hold := charge // InFlight slots are taken whatever the cost
	charge = charge && cost > 0
	var draw, lease int64
	drawn := false
	for i := range limits {
		p[i].sp = limits[i].Spec()
		p[i].keep = charge
		switch {
		case p[i].sp.Algorithm == store.Suppressed && !drawn:
			draw, drawn = store.DrawBits(s.random()), true // one per call, as redisstore
		case p[i].sp.Algorithm == store.InFlight && hold:
			if lease == 0 {
				lease = s.leases.Add(1)
			}
			p[i].lease, p[i].keep = lease, true
		}
	}
	sub := subject.Key(key)
	nowUS := s.clock()
	nowMS := nowUS / 1000

	sh := s.shard(sub)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s.maybeSweep(sh, nowMS)
	slots := sh.subjects[sub]
	allowed := true
	for i := range limits {
		var err error
		slots, err = s.checkLimit(sh, sub, slots, &limits[i], &p[i], &states[i], cost, p[i].keep, nowUS, draw)
		if err != nil {
			return err
		}
		allowed = allowed && states[i].Allowed
	}
	switch {
	case !hold:
	case allowed:
		if s.maxEntries > 0 && missing(slots, p) > 0 { // a subject with state for every limit needs no room
			if !s.admit(sh, sub, nowMS, func() int { return missing(sh.subjects[sub], p) }) {
				refuse(states, sh, nowMS)
				return nil
			}
			slots = sh.subjects[sub]
		}
		for i := range p {
			if !p[i].keep {
				continue
			}
			if p[i].sp.Algorithm == store.Suppressed {
				b := p[i].next.buckets
				b[len(b)-1].a += cost // the call's bucket is last
			}
			slots = sh.setState(sub, slots, p[i].sp.ID, &p[i].next, states[i].Remaining == 0)
		}
		if rc != nil {
			fillReceipt(rc, p, cost, nowUS, lease)
		}
	default:
		// Nothing is charged: report each admitting limit as it stands. A
		// Suppressed limit counts the call anyway, as declined (unless that
		// needs a new entry and the store is full: the call stays denied).
		for i := range p {
			switch {
			case p[i].sp.Algorithm == store.Suppressed:
				if len(p[i].next.buckets) > 0 {
					ok := s.room(sh, sub, p[i:i+1], nowMS) // may sweep or evict: read the slots again
					if slots = sh.subjects[sub]; ok {
						slots = sh.setState(sub, slots, p[i].sp.ID, &p[i].next, true)
					}
				}
			case states[i].Allowed:
				slots, _ = s.checkLimit(sh, sub, slots, &limits[i], &p[i], &states[i], cost, false, nowUS, draw)
			default:
				sh.markFull(sub, p[i].sp.ID) // a live denial: never evicted
			}
		}
	}
	return nil
}

// room reports whether the states of p may be stored for sub: they exist,
// or the store can admit them (which it then counts).
func (s *Store) room(sh *shard, sub string, p []pending, nowMS int64) bool {
	return s.maxEntries == 0 || s.admit(sh, sub, nowMS, func() int { return missing(sh.subjects[sub], p) })
}

// checkLimit decides one limit, l with its pending p, writing its state to
// st and, when charging and the limit admits the call, the state to store
// to p.next. It honours and sets the limit's block as the engine does: a
// live block denies; a denial (not an unsatisfiable one) by a limit with a
// block starts the block when charging. A denial by a block waits for the
// longer of the block and the limit's own counters, which decide once the
// block ends, whether the block starts now or is met later. A block is
// stored even past WithMaxEntries' bound: a denial is never forgotten. It
// returns sub's slots as they then are.
func (s *Store) checkLimit(sh *shard, sub string, slots []slot, l *ratekit.Limit, p *pending, st *ratekit.LimitState, cost int64, charge bool, nowUS, draw int64) ([]slot, error) {
	nowMS := nowUS / 1000
	sp := &p.sp
	i := find(slots, sp.ID)
	var none entry
	e := &none
	ok := i >= 0 && slots[i].has && slots[i].state.expireMS >= nowMS
	if ok {
		e = &slots[i].state
	}
	block := sp.Block.Milliseconds()
	if block > 0 && i >= 0 && slots[i].blocked && slots[i].blockMS > nowMS {
		left := ms(slots[i].blockMS - nowMS)
		var own ratekit.LimitState // what the counters say, as things stand
		if ok {
			var scratch entry
			if err := check(sp, e, ok, cost, false, nowUS, draw, 0, &own, &scratch); err != nil {
				return slots, err
			}
		}
		*st = ratekit.LimitState{Limit: *l, ResetAfter: max(left, own.ResetAfter), RetryAfter: max(left, own.RetryAfter), Blocked: true}
		return slots, nil
	}
	if err := check(sp, e, ok, cost, charge, nowUS, draw, p.lease, st, &p.next); err != nil {
		return slots, err
	}
	st.Limit = *l
	drawn := st.Suppression > 0 && st.Suppression < 1 // declined by a draw: no block
	if block > 0 && !st.Allowed && !st.Unsatisfiable && !drawn && charge {
		var fresh bool
		slots, fresh = sh.setBlock(sub, slots, sp.ID, nowMS+block)
		if fresh && s.maxEntries > 0 {
			s.count.Add(1)
		}
		st.RetryAfter, st.ResetAfter, st.Blocked = max(st.RetryAfter, ms(block)), max(st.ResetAfter, ms(block)), true
		st.EffectiveWindow = 0 // nothing passes until the block ends
	}
	return slots, nil
}
