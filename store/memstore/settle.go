package memstore

import (
	"context"
	"strconv"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/store"
)

// Reserve implements store.Settler: Take, with the Receipt of an admitted
// charge in the Decision.
func (s *Store) Reserve(_ context.Context, key string, limits []ratekit.Limit, cost int64) (d ratekit.Decision, err error) {
	var rc ratekit.Receipt
	err = s.decide(&d, key, limits, cost, true, &rc)
	return d, err
}

// receiptOf returns rc when a call it was given for charged something.
func receiptOf(rc *ratekit.Receipt, allowed bool) *ratekit.Receipt {
	if rc == nil || !allowed || rc.At == 0 {
		return nil
	}
	return rc
}

// fillReceipt records a charge of cost at nowUS to the limits of p, whose
// states are p[i].next, and the lease it took (0: none).
func fillReceipt(rc *ratekit.Receipt, p []pending, cost, nowUS, lease int64) {
	rc.Cost, rc.At = cost, nowUS
	rc.Ends = make([]int64, len(p))
	for i := range p {
		if p[i].sp.Algorithm != store.SlidingLog { // a log's end is an extra charge's
			rc.Ends[i] = endOf(&p[i].sp, &p[i].next)
		}
	}
	if lease != 0 {
		rc.Lease = strconv.FormatInt(lease, 10)
	}
}

// Settle implements store.Settler: it moves the charge recorded by rc to
// cost in every limit and releases rc's lease, at once, and updates rc.
func (s *Store) Settle(_ context.Context, key string, limits []ratekit.Limit, rc *ratekit.Receipt, cost int64) error {
	c, err := s.settling(key, limits, rc, cost)
	if err != nil {
		return err
	}
	defer c.sh.mu.Unlock()
	sh, sub, nowUS, lease := c.sh, c.sub, c.nowUS, c.lease
	for i := range limits {
		sp := limits[i].Spec()
		e := c.live(sp.ID)
		if sp.Algorithm == store.InFlight {
			if e != nil && lease != 0 {
				e.log = dropLease(e.log, lease)
			}
			continue
		}
		if delta := cost - rc.Cost; delta < 0 && e != nil {
			giveBack(&sp, e, rc, i, -delta, nowUS)
		} else if delta > 0 {
			next, ok := extra(&sp, e, delta, nowUS)
			if ok && (e != nil || s.room(sh, sub, []pending{{sp: sp, keep: true}}, nowUS/1000)) {
				sh.setState(sub, sh.subjects[sub], sp.ID, &next, false)
				rc.Ends[i] = endOf(&sp, &next)
			}
		}
	}
	rc.Cost = cost
	return nil
}

// endOf is what a Receipt records of limit sp's state e after a charge.
func endOf(sp *ratekit.Spec, e *entry) int64 {
	switch a := sp.Algorithm; {
	case a == store.FixedWindow:
		return e.expireMS * 1000
	case store.Bucket(a):
		return e.value
	case a == store.SlidingLog: // an extra charge's time
		if len(e.log) > 0 {
			return e.log[len(e.log)-1]
		}
	}
	return 0
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
func (s *Store) settling(key string, limits []ratekit.Limit, rc *ratekit.Receipt, cost int64) (settling, error) {
	if err := s.checkSettle(key, limits, rc, cost); err != nil {
		return settling{}, err
	}
	c := settling{sub: subject.Key(key), nowUS: s.clock(), lease: leaseID(rc.Lease)}
	c.sh = s.shard(c.sub)
	c.sh.mu.Lock()
	return c, nil
}

// live returns the subject's live state of limit id, or nil.
func (c *settling) live(id string) *entry {
	slots := c.sh.subjects[c.sub]
	if j := find(slots, id); j >= 0 && slots[j].has && slots[j].state.expireMS >= c.nowUS/1000 {
		return &slots[j].state
	}
	return nil
}

// checkSettle checks a Settle call's arguments.
func (s *Store) checkSettle(key string, limits []ratekit.Limit, rc *ratekit.Receipt, cost int64) error {
	if key == "" {
		return ratekit.ErrEmptyKey
	}
	if err := store.CheckCost(cost); err != nil {
		return err
	}
	if err := store.CheckLimits(limits); err != nil {
		return err
	}
	return store.CheckReceipt(rc, len(limits))
}

// giveBack gives back n of the charge rc recorded in limit i, as far as e,
// its live state, still holds it: see settle.lua.
func giveBack(sp *ratekit.Spec, e *entry, rc *ratekit.Receipt, i int, n, nowUS int64) {
	switch a := sp.Algorithm; {
	case a == store.FixedWindow:
		if e.expireMS*1000 == rc.Ends[i] { // the window charged
			e.value = max(e.value-n, 0)
		}
	case a == store.SlidingWindow:
		idx := rc.At / 1000 / sp.Precision.Milliseconds()
		for k := range e.buckets {
			if e.buckets[k].idx == idx {
				e.buckets[k].n = max(e.buckets[k].n-n, 0)
			}
		}
	case a == store.SlidingLog: // the extra charge's entries (at Ends) first
		for _, at := range [2]int64{rc.Ends[i], rc.At} {
			for k := len(e.log) - 1; k >= 0 && n > 0 && at > 0; k-- {
				if e.log[k] == at {
					e.log = append(e.log[:k], e.log[k+1:]...)
					n--
				}
			}
		}
	case store.Bucket(a):
		if e.value > nowUS {
			held := max(min(n*sp.Interval.Microseconds(), rc.Ends[i]-nowUS), 0)
			e.value = max(e.value-held, nowUS)
			rc.Ends[i] -= held
		}
	}
}

// extra returns limit sp's state e (nil: none live) with n more charged at
// nowUS, past the limit if need be, and whether the algorithm takes it.
func extra(sp *ratekit.Spec, e *entry, n, nowUS int64) (entry, bool) {
	var none entry
	if e == nil {
		e = &none
	}
	nowMS := nowUS / 1000
	n = min(n, sp.Quota) // at most one quota (a bucket's burst): no limit owes more
	switch a := sp.Algorithm; {
	case a == store.FixedWindow:
		if e.expireMS > nowMS {
			return entry{value: e.value + n, expireMS: e.expireMS}, true
		}
		return entry{value: n, expireMS: nowMS + sp.Window.Milliseconds()}, true
	case a == store.SlidingWindow:
		width, windowMS := sp.Precision.Milliseconds(), sp.Window.Milliseconds()
		c := nowMS / width
		o := c - windowMS/width
		next := entry{expireMS: (c+1)*width + windowMS}
		added := false
		for _, b := range e.buckets {
			if b.idx >= o {
				if b.idx == c {
					b.n += n
					added = true
				}
				next.buckets = append(next.buckets, b)
			}
		}
		if !added {
			next.buckets = append(next.buckets, bucket{idx: c, n: n})
		}
		return next, true
	case a == store.SlidingLog:
		from := nowUS - sp.Window.Microseconds()
		next := entry{expireMS: nowMS + sp.Window.Milliseconds()}
		for _, t := range e.log {
			if t > from {
				next.log = append(next.log, t)
			}
		}
		for range n {
			next.log = append(next.log, nowUS)
		}
		return next, true
	case store.Bucket(a):
		tat := max(e.value, nowUS) + n*sp.Interval.Microseconds()
		return entry{value: tat, expireMS: nowMS + (tat-nowUS+999)/1000}, true
	}
	return none, false
}

// Renew implements store.Settler: it extends rc's lease in every InFlight
// limit by one lease from now, and reports whether every one still held it.
func (s *Store) Renew(_ context.Context, key string, limits []ratekit.Limit, rc *ratekit.Receipt) (bool, error) {
	c, err := s.settling(key, limits, rc, rc.Cost)
	if err != nil {
		return false, err
	}
	defer c.sh.mu.Unlock()
	nowUS, lease := c.nowUS, c.lease
	held := true
	for i := range limits {
		sp := limits[i].Spec()
		if sp.Algorithm != store.InFlight {
			continue
		}
		found := false
		if e := c.live(sp.ID); e != nil {
			expiry := nowUS + sp.Window.Microseconds()
			for k := 0; k < len(e.log); k += 2 {
				if e.log[k+1] == lease && e.log[k] > nowUS {
					e.log[k], found = expiry, true
				}
			}
			if found {
				e.expireMS = max(e.expireMS, (expiry+999)/1000)
			}
		}
		held = held && found
	}
	return held, nil
}

// leaseID parses a lease this store handed out; 0 for any other.
func leaseID(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// dropLease returns log without the lease id.
func dropLease(log []int64, id int64) []int64 {
	for k := 0; k < len(log); k += 2 {
		if log[k+1] == id {
			return append(log[:k], log[k+2:]...)
		}
	}
	return log
}

var _ store.Settler = (*Store)(nil)
