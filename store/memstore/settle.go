package memstore

import (
	"strconv"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/store"
)

// receiptOf returns rc when a call it was given for charged something.
func receiptOf(rc *ratekit.Receipt, allowed bool) *ratekit.Receipt {
	if rc == nil || !allowed || rc.At == 0 {
		return nil
	}
	return rc
}

// fillReceipt records a charge of cost at nowUS to the limits of rules,
// whose states are p[i].next, and the lease it took (0: none).
func fillReceipt(rc *ratekit.Receipt, rules []rule, p []pending, cost, nowUS, lease int64) {
	rc.Cost, rc.At = cost, nowUS
	rc.Ends, rc.Held = make([]int64, len(p)), make([]int64, len(p))
	for i := range p {
		if r := &rules[i]; cost > 0 && r.caps&algo.Settles != 0 {
			rc.Ends[i], rc.Held[i] = r.alg.End(&r.spec, &p[i].next, nowUS), cost
		}
	}
	if lease != 0 {
		rc.Lease = strconv.FormatInt(lease, 10)
	}
}

// settle is store.Settler's Settle: it moves the charge recorded by rc to
// cost in every limit and releases rc's lease, at once, and updates rc.
// Each limit holds at most one quota (a bucket's burst) of a call's charge;
// a refund gives back only what rc records the limit holds (Held), as far
// as the limit's state still has it, so a settlement never gives back
// another call's charge. lua/settle.lua in store/redisengine holds the
// same rules.
func (s *Store) settle(key string, rules []rule, rc *ratekit.Receipt, cost int64) error {
	c, err := s.settling(key, rules, rc, cost)
	if err != nil {
		return err
	}
	defer c.sh.mu.Unlock()
	sh, sub, nowUS := c.sh, c.sub, c.nowUS
	for i := range rules {
		r := &rules[i]
		e := c.live(r.spec.ID)
		switch {
		case r.caps&algo.Holds != 0:
			if e != nil && c.lease != 0 {
				r.alg.Release(e, c.lease)
			}
			continue
		case r.caps&algo.Settles == 0:
			continue
		}
		was, now := min(rc.Cost, r.spec.Quota), min(cost, r.spec.Quota)
		switch {
		case now < was:
			if e != nil {
				r.alg.GiveBack(&r.spec, e, &rc.Ends[i], min(was-now, rc.Held[i]), nowUS)
			}
			rc.Held[i] = max(rc.Held[i]-(was-now), 0)
		case now > was:
			next, end, held := r.alg.Extra(&r.spec, e, rc.Ends[i], rc.Held[i], now-was, nowUS)
			if e != nil || s.room(sh, sub, rules[i:i+1], []pending{{keep: true}}, nowUS/1000) {
				sh.setState(sub, sh.subjects[sub], r.spec.ID, &next, false)
				rc.Ends[i], rc.Held[i] = end, held
			}
		}
	}
	rc.Cost = cost
	return nil
}

// renew is store.Settler's Renew: it extends rc's lease in every Holds
// limit by one lease from now, and reports whether every one still held it.
func (s *Store) renew(key string, rules []rule, rc *ratekit.Receipt) (bool, error) {
	c, err := s.settling(key, rules, rc, rc.Cost)
	if err != nil {
		return false, err
	}
	defer c.sh.mu.Unlock()
	held := true
	for i := range rules {
		if r := &rules[i]; r.caps&algo.Holds != 0 {
			e := c.live(r.spec.ID)
			found := e != nil && r.alg.Renew(&r.spec, e, c.lease, c.nowUS)
			held = held && found
		}
	}
	return held, nil
}

// A settling is one Settle or Renew call about a subject, whose shard it
// holds locked.
type settling struct {
	sh           *shard
	sub          string
	nowUS, lease int64
}

// settling checks a Settle or Renew call's arguments and locks the
// subject's shard; the caller unlocks c.sh.mu.
func (s *Store) settling(key string, rules []rule, rc *ratekit.Receipt, cost int64) (settling, error) {
	if key == "" {
		return settling{}, ratekit.ErrEmptyKey
	}
	if err := store.CheckCost(cost); err != nil {
		return settling{}, err
	}
	if err := store.CheckReceipt(rc, len(rules)); err != nil {
		return settling{}, err
	}
	c := settling{sub: subject.Key(key), nowUS: s.clock(), lease: leaseID(rc.Lease)}
	c.sh = s.shard(c.sub)
	c.sh.mu.Lock()
	return c, nil
}

// live returns the subject's live state of limit id, or nil.
func (c *settling) live(id string) *algo.State {
	slots := c.sh.subjects[c.sub]
	if j := find(slots, id); j >= 0 && slots[j].has && slots[j].state.ExpireMS >= c.nowUS/1000 {
		return &slots[j].state
	}
	return nil
}

// leaseID parses a lease this store handed out; 0 for any other.
func leaseID(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
