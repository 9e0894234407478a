package memstore

import (
	"strconv"

	"github.com/ratekit/ratekit"
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

// fillReceipt records a charge of cost at nowUS to the limits of p, whose
// states are p[i].next, and the lease it took (0: none): see settled.
func fillReceipt(rc *ratekit.Receipt, p []pending, cost, nowUS, lease int64) {
	rc.Cost, rc.At = cost, nowUS
	rc.Ends, rc.Held = make([]int64, len(p)), make([]int64, len(p))
	for i := range p {
		if cost > 0 && settles(p[i].sp.Algorithm) {
			rc.Ends[i], rc.Held[i] = endOf(&p[i].sp, &p[i].next, nowUS), cost
		}
	}
	if lease != 0 {
		rc.Lease = strconv.FormatInt(lease, 10)
	}
}

// settles reports whether Settle moves the charges of algorithm a.
func settles(a string) bool {
	return a == store.FixedWindow || a == store.SlidingWindow || a == store.SlidingLog || store.Bucket(a)
}

// settle is store.Settler's Settle: it moves the charge recorded by rc to
// cost in every limit and releases rc's lease, at once, and updates rc.
// Each limit holds at most one quota (a bucket's burst) of a call's charge;
// a refund gives back only what rc records the limit holds (Held), as far
// as the limit's state still has it, so a settlement never gives back
// another call's charge. lua/settle.lua in store/redisengine holds the
// same rules.
func (s *Store) settle(key string, limits []ratekit.Limit, rc *ratekit.Receipt, cost int64) error {
	c, err := s.settling(key, limits, rc, cost)
	if err != nil {
		return err
	}
	defer c.sh.mu.Unlock()
	sh, sub, nowUS, lease := c.sh, c.sub, c.nowUS, c.lease
	for i := range limits {
		sp := limits[i].Spec()
		e := c.live(sp.ID)
		switch {
		case sp.Algorithm == store.InFlight:
			if e != nil && lease != 0 {
				e.log = dropLease(e.log, lease)
			}
			continue
		case !settles(sp.Algorithm):
			continue
		}
		was, now := min(rc.Cost, sp.Quota), min(cost, sp.Quota)
		switch {
		case now < was:
			if e != nil {
				giveBack(&sp, e, &rc.Ends[i], min(was-now, rc.Held[i]), nowUS)
			}
			rc.Held[i] = max(rc.Held[i]-(was-now), 0)
		case now > was:
			next, end, held := extra(&sp, e, rc.Ends[i], rc.Held[i], now-was, nowUS)
			if e != nil || s.room(sh, sub, []pending{{sp: sp, keep: true}}, nowUS/1000) {
				sh.setState(sub, sh.subjects[sub], sp.ID, &next, false)
				rc.Ends[i], rc.Held[i] = end, held
			}
		}
	}
	rc.Cost = cost
	return nil
}

// endOf is where a charge made at nowUS sits in limit sp's state e after
// it (Receipt.Ends): a FixedWindow's window end, a bucket's theoretical
// arrival time, a SlidingWindow's or SlidingLog's time of the charge (µs).
func endOf(sp *ratekit.Spec, e *entry, nowUS int64) int64 {
	switch a := sp.Algorithm; {
	case a == store.FixedWindow:
		return e.expireMS * 1000
	case store.Bucket(a):
		return e.value
	}
	return nowUS
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
	return store.CheckReceipt(rc, len(limits))
}

// sameWindow reports whether a FixedWindow whose window ends at endMS is
// the one a receipt records ending at endUS: two windows of one subject end
// at least a window apart, and the Redis engine reads a window's end to the
// millisecond, so the ends match within half a window.
func sameWindow(sp *ratekit.Spec, endMS, endUS int64) bool {
	d := endMS*1000 - endUS
	return max(d, -d) < sp.Window.Microseconds()/2
}

// giveBack gives back n units of a charge that sits at *end in limit sp's
// live state e, as far as e still holds them; n is at most what the
// receipt records the limit holds. It never takes a count below zero.
func giveBack(sp *ratekit.Spec, e *entry, end *int64, n, nowUS int64) {
	switch a := sp.Algorithm; {
	case a == store.FixedWindow:
		if e.expireMS > nowUS/1000 && sameWindow(sp, e.expireMS, *end) {
			e.value = max(e.value-n, 0)
			if e.value == 0 { // an emptied window is no window: the next charge starts one
				e.expireMS = 0
			}
		}
	case a == store.SlidingWindow:
		idx := *end / 1000 / sp.Precision.Milliseconds()
		for k := range e.buckets {
			if e.buckets[k].idx == idx {
				e.buckets[k].n = max(e.buckets[k].n-n, 0)
			}
		}
	case a == store.SlidingLog:
		if *end > nowUS-sp.Window.Microseconds() {
			e.log = dropAt(e.log, *end, n)
		}
	case store.Bucket(a):
		if e.value > nowUS {
			held := max(min(n*sp.Interval.Microseconds(), *end-nowUS), 0)
			e.value = max(e.value-held, nowUS)
			*end -= held
		}
	}
}

// dropAt removes up to n entries at time at from a log, the last first.
func dropAt(log []int64, at, n int64) []int64 {
	for k := len(log) - 1; k >= 0 && n > 0; k-- {
		if log[k] == at {
			log = append(log[:k], log[k+1:]...)
			n--
		}
	}
	return log
}

// countAt counts a log's entries at time at.
func countAt(log []int64, at int64) int64 {
	n := int64(0)
	for _, t := range log {
		if t == at {
			n++
		}
	}
	return n
}

// extra returns limit sp's state e (nil: none live) with n more of a
// charge charged at nowUS, past the limit if need be, and where the charge
// then sits and how much of it the limit holds, given where it sat (end)
// and how much the limit held there (held). A FixedWindow adds n to the
// charged window while it lives, else starts a window; a bucket moves its
// arrival time; a SlidingWindow or SlidingLog moves what it still holds of
// the charge to now, with the n more, so that the charge sits in one place.
func extra(sp *ratekit.Spec, e *entry, end, held, n, nowUS int64) (next entry, at, holds int64) {
	var none entry
	if e == nil {
		e = &none
	}
	nowMS := nowUS / 1000
	switch a := sp.Algorithm; {
	case a == store.FixedWindow:
		if e.expireMS > nowMS {
			if !sameWindow(sp, e.expireMS, end) {
				held = 0
			}
			return entry{value: e.value + n, expireMS: e.expireMS}, e.expireMS * 1000, held + n
		}
		next = entry{value: n, expireMS: nowMS + sp.Window.Milliseconds()}
		return next, next.expireMS * 1000, n
	case a == store.SlidingWindow:
		width, windowMS := sp.Precision.Milliseconds(), sp.Window.Milliseconds()
		c, from := nowMS/width, end/1000/width
		o := c - windowMS/width
		next = entry{expireMS: (c+1)*width + windowMS}
		moved := int64(0)
		for _, b := range e.buckets {
			if b.idx >= o {
				next.buckets = append(next.buckets, b)
			}
		}
		for k := range next.buckets {
			if b := &next.buckets[k]; b.idx == from {
				moved = min(held, b.n)
				b.n -= moved
			}
		}
		if k := len(next.buckets) - 1; k >= 0 && next.buckets[k].idx == c {
			next.buckets[k].n += moved + n
		} else {
			next.buckets = append(next.buckets, bucket{idx: c, n: moved + n})
		}
		return next, nowUS, moved + n
	case a == store.SlidingLog:
		start := nowUS - sp.Window.Microseconds()
		next = entry{expireMS: nowMS + sp.Window.Milliseconds()}
		for _, t := range e.log {
			if t > start {
				next.log = append(next.log, t)
			}
		}
		moved := int64(0)
		if end > start {
			moved = min(held, countAt(next.log, end))
			next.log = dropAt(next.log, end, moved)
		}
		for range moved + n {
			next.log = append(next.log, nowUS)
		}
		return next, nowUS, moved + n
	}
	// a bucket
	tat := max(e.value, nowUS) + n*sp.Interval.Microseconds()
	return entry{value: tat, expireMS: nowMS + (tat-nowUS+999)/1000}, tat, held + n
}

// renew is store.Settler's Renew: it extends rc's lease in every InFlight
// limit by one lease from now, and reports whether every one still held it.
func (s *Store) renew(key string, limits []ratekit.Limit, rc *ratekit.Receipt) (bool, error) {
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
