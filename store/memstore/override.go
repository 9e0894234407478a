package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// An override is one limit's numbers for one subject (ratekit.Override),
// held in the subject's shard by subject and limit ID until cleared or, when
// untilMS is not 0, until the store's clock reaches the millisecond
// untilMS, as the Redis engine's override keys.
type override struct {
	subject string
	numbers algo.Numbers
	untilMS int64
	reset   bool // the limit is carry.Reset's: the state goes when the override does

	// the limit in force, made from the rule's limit that last read it
	base, limit ratekit.Limit
	spec        algo.Spec
	ok          bool // limit is valid
}

// SetOverride implements the store.Overrider contract: l's numbers are in
// force for subject, for expiry (0: until cleared). Under carry.Reset the
// limit's state for subject starts afresh.
func (s *Store) SetOverride(_ context.Context, subject string, l ratekit.Limit, expiry time.Duration) error {
	sp := algo.Spec(l.Spec())
	nowUS := s.clock()
	sub, sh := s.lock(subject, nowUS/1000)
	defer sh.mu.Unlock()
	o := override{subject: subject, numbers: algo.NumbersOf(&sp), reset: sp.Carry == carry.Reset}
	if expiry > 0 {
		o.untilMS = nowUS/1000 + (expiry.Microseconds()+999)/1000
	}
	if sh.overrides == nil {
		sh.overrides = make(map[entryKey]*override)
	}
	sh.overrides[entryKey{sub, sp.ID}] = &o
	if o.reset {
		s.forget(sh, sub, sp.ID)
	}
	return nil
}

// ClearOverride implements the store.Overrider contract: l's own numbers
// are in force again for subject. Under carry.Reset the limit's state for
// subject starts afresh.
func (s *Store) ClearOverride(_ context.Context, subject string, l ratekit.Limit) error {
	sp := l.Spec()
	sub, sh := s.lock(subject, s.clock()/1000)
	defer sh.mu.Unlock()
	if k := (entryKey{sub, sp.ID}); sh.overrides[k] != nil {
		s.dropOverride(sh, k, sp.Carry == carry.Reset)
	}
	return nil
}

// ListOverrides implements the store.Overrider contract: f gets every
// override in force of limits, for subject or (subject "") every subject,
// by subject and then in the order of limits.
func (s *Store) ListOverrides(_ context.Context, subject string, limits []ratekit.Limit, f func(string, ratekit.Limit, time.Time)) error {
	type found struct {
		subject string
		i       int
		limit   ratekit.Limit
		until   int64
	}
	var all []found
	nowUS := s.clock()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for k, o := range sh.overrides { // expire may delete o: allowed while ranging
			j := slices.IndexFunc(limits, func(l ratekit.Limit) bool { return l.Spec().ID == k.id })
			if j < 0 || subject != "" && o.subject != subject || s.expire(sh, k, o, nowUS) {
				continue
			}
			if o.use(limits[j]) {
				all = append(all, found{o.subject, j, o.limit, o.untilMS})
			}
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(all, func(a, b found) int { return cmp.Or(cmp.Compare(a.subject, b.subject), cmp.Compare(a.i, b.i)) })
	for _, o := range all {
		var until time.Time
		if o.until != 0 {
			until = time.UnixMilli(o.until)
		}
		f(o.subject, o.limit, until)
	}
	return nil
}

// expire drops o, sh's override k, if it has ended at nowUS, with the
// state of a carry.Reset limit, and reports whether it did.
func (s *Store) expire(sh *shard, k entryKey, o *override, nowUS int64) bool {
	if o.untilMS == 0 || nowUS/1000 < o.untilMS {
		return false
	}
	s.dropOverride(sh, k, o.reset)
	return true
}

// dropOverride deletes sh's override k and, for a carry.Reset limit
// (reset), the state made under it.
func (s *Store) dropOverride(sh *shard, k entryKey, reset bool) {
	delete(sh.overrides, k)
	if reset {
		s.forget(sh, k.subject, k.id)
	}
}

// use makes o's limit in force the one of base with o's numbers, and
// reports whether those are valid for it.
func (o *override) use(base ratekit.Limit) bool {
	if o.base != base {
		sp := base.Spec()
		o.numbers.Apply((*algo.Spec)(&sp))
		l, err := base.With(sp)
		o.base, o.limit, o.ok = base, l, err == nil
		o.spec = algo.Spec(l.Spec())
	}
	return o.ok
}

// inForce returns rules with the overrides of sub in sh applied at nowUS
// (the rules themselves when none applies), dropping the overrides that
// have ended.
func (s *Store) inForce(sh *shard, sub string, rules []rule, nowUS int64) []rule {
	if len(sh.overrides) == 0 {
		return rules
	}
	out := rules
	for i := range rules {
		k := entryKey{sub, rules[i].spec.ID}
		o := sh.overrides[k]
		if o == nil || s.expire(sh, k, o, nowUS) || !o.use(rules[i].limit) {
			continue
		}
		if &out[0] == &rules[0] {
			out = slices.Clone(rules)
		}
		out[i].limit, out[i].spec = o.limit, o.spec
	}
	return out
}

var _ store.Overrider = (*Store)(nil)
