package redisstore_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/carry"
)

// This file generates the differential test's overrides (store.Overrider):
// a share of the sequences (diffOverrideShare) set and clear overrides as
// they go, on both stores at the same step, for random subjects and limits
// of the sequence's sets (variants too), with other numbers of the same
// shape (vary: quota, burst, rate, window, block, lease, queue wait; a
// block only where the limit has one), as ratekit.Limiter.Override makes
// them (the set's limit With them), and a random expiry (none, a few
// milliseconds, or up to a few of the limit's spans, so that overrides end
// inside sequences). Before its variants, one limit in five of such a
// sequence becomes carry.Reset. Every step then compares the limit in
// force each store reports, limit state by limit state, with the other
// store's and with the overrides the test set (an oracle: in force while
// the store's clock, in whole ms, is before the set time's ms plus the
// expiry rounded up to ms; a limit without a block gets none), and both
// stores' ListOverrides, for the step's subject and for all. The choices
// come from a random stream of their own: the steps between override steps
// are the ones the sequence has without.

const (
	diffOverrideShare = 50 // percent of the sequences that set overrides
	diffOverrideSteps = 15 // percent of their steps that an override step precedes
	diffOverrideClear = 35 // percent of the override steps that clear one

	// diffOverrideShortest is the shortest expiry: an override of 1 ms (or
	// less, rounded up) set at ms t ends at t+1, and the engine's key for it
	// gets PXAT t, which Redis keeps through ms t but miniredis drops at once
	// (or, at t exactly, keeps for ever: a TTL of 0 is none to it).
	diffOverrideShortest = time.Millisecond + time.Microsecond
)

// withResets makes one limit in five of sets carry.Reset.
func withResets(rng *rand.Rand, sets [][]dlimit) [][]dlimit {
	reset := map[string]bool{}
	for _, d := range sets[0] {
		if rng.IntN(5) == 0 {
			reset[d.l.Name()] = true
		}
	}
	if len(reset) == 0 {
		return sets
	}
	return mapSets(sets, func(d dlimit) dlimit {
		if reset[d.l.Name()] && d.l.Spec().Carry != carry.Reset {
			return dlimit{d.l.Carry(carry.Reset), d.code + ".Carry(carry.Reset)"}
		}
		return d
	})
}

// okey names an override: a subject (index in diffSubjects) and a limit ID.
type okey struct {
	sub int
	id  string
}

// An oactive is an override the test set: the limit in force it was set
// with, where, and its end (ms, 0: none).
type oactive struct {
	limit    ratekit.Limit
	set, lim int
	endMS    int64
}

// overrides are a sequence's overrides and the stream that picks them.
type overrides struct {
	orng   *rand.Rand
	on     bool // the sequence sets overrides
	active map[okey]oactive
	stats  overrideStats
}

// overrideStats are the counts of the overrides of a run.
type overrideStats struct {
	sequences  int            // sequences with overrides
	set, clear int            // override steps
	steps      int            // steps about a limit with an override in force
	inForce    map[string]int // those steps, by the algorithm of such a limit
	expired    int            // overrides that ended inside their sequence
	resetEnds  int            // of those, of carry.Reset limits
	lists      int            // ListOverrides compared (both stores, per subject or all)
	listed     int            // overrides they listed
}

func (s *overrideStats) add(o overrideStats) {
	s.sequences += o.sequences
	s.set += o.set
	s.clear += o.clear
	s.steps += o.steps
	s.expired += o.expired
	s.resetEnds += o.resetEnds
	s.lists += o.lists
	s.listed += o.listed
	for k, v := range o.inForce {
		if s.inForce == nil {
			s.inForce = map[string]int{}
		}
		s.inForce[k] += v
	}
}

func (s overrideStats) String() string {
	keys := make([]string, 0, len(s.inForce))
	for k := range s.inForce {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.inForce[k]))
	}
	return fmt.Sprintf("%d sequences with overrides; %d override steps that set one, %d that clear one; "+
		"%d steps with an override in force (%s); %d overrides ended inside their sequence (%d of carry.Reset limits); "+
		"%d ListOverrides compared, listing %d overrides",
		s.sequences, s.set, s.clear, s.steps, strings.Join(parts, ", "), s.expired, s.resetEnds, s.lists, s.listed)
}

// nextOverride returns a random override step: set or clear (one in force,
// two times in three) an override of a random limit of a random set, for a
// random subject, after a clock step of 0 or about the set's limits.
func (r *diffRun) nextOverride() dop {
	g := r.ov.orng
	o := dop{sub: g.IntN(len(diffSubjects)), set: g.IntN(len(r.sets))}
	o.lim = g.IntN(len(r.sets[o.set]))
	if g.IntN(2) == 0 {
		var fast []dlimit
		for _, d := range r.sets[o.set] {
			if !slowLimit(d) {
				fast = append(fast, d)
			}
		}
		o.adv = genStep(g, spans(fast))
	}
	if g.IntN(100) < diffOverrideClear {
		o.kind = opClear
		if len(r.ov.active) > 0 && g.IntN(3) > 0 {
			keys := slices.SortedFunc(func(yield func(okey) bool) {
				for k := range r.ov.active {
					if !yield(k) {
						return
					}
				}
			}, func(a, b okey) int { return cmp.Or(cmp.Compare(a.sub, b.sub), cmp.Compare(a.id, b.id)) })
			k := keys[g.IntN(len(keys))]
			a := r.ov.active[k]
			o.sub, o.set, o.lim = k.sub, a.set, a.lim
		}
		return o
	}
	o.kind = opOverride
	d := r.sets[o.set][o.lim]
	n := numsOf(d.l)
	v := n
	for range 50 {
		v = varyOnce(g, n, false)
		if n.block == 0 {
			v.block = 0 // an override changes a block, adds none
		}
		if v != n && valid(v.build().l) {
			break
		}
		v = n
	}
	o.over = v.build().l
	switch k := g.IntN(10); {
	case k < 3: // until cleared
	case k < 5: // a few ms, at times not whole
		o.exp = time.Duration(2+g.IntN(4)) * time.Millisecond
		if g.IntN(2) == 0 {
			o.exp += time.Duration(g.IntN(1000)) * time.Microsecond
		}
	default: // about the limit's spans, up to three
		ls := spans([]dlimit{d})
		x := ls[g.IntN(len(ls))] * time.Duration(1+g.IntN(3))
		x += []time.Duration{0, 0, -time.Millisecond, time.Millisecond, time.Microsecond, 999 * time.Microsecond}[g.IntN(6)]
		o.exp = max(x, diffOverrideShortest)
	}
	return o
}

// playOverride plays override step o on both stores, as
// ratekit.Limiter.Override and ClearOverride call them, and records it.
func (r *diffRun) playOverride(ctx context.Context, o dop) (em, er error, msgs []string) {
	base := r.sets[o.set][o.lim].l
	sub := diffSubjects[o.sub]
	k := okey{o.sub, base.Spec().ID}
	if o.kind == opClear {
		r.ov.stats.clear++
		em, er = r.mem.ClearOverride(ctx, sub, base), r.env.red.ClearOverride(ctx, sub, base)
		delete(r.ov.active, k)
		return em, er, nil
	}
	r.ov.stats.set++
	in, err := base.With(o.over.Spec())
	if err != nil {
		return nil, nil, []string{fmt.Sprintf("override %s of %s: %v", numbersOf(o.over), numbersOf(base), err)}
	}
	em, er = r.mem.SetOverride(ctx, sub, in, o.exp), r.env.red.SetOverride(ctx, sub, in, o.exp)
	a := oactive{limit: in, set: o.set, lim: o.lim}
	if o.exp > 0 {
		a.endMS = r.clock.Now().UnixMicro()/1000 + (o.exp.Microseconds()+999)/1000
	}
	r.ov.active[k] = a
	return em, er, nil
}

// countOverrides ends, in the test's record, the overrides that have ended
// by now, and counts step o if an override is in force for one of its
// limits.
func (r *diffRun) countOverrides(o dop) {
	nowMS := r.clock.Now().UnixMicro() / 1000
	for k, a := range r.ov.active {
		if a.endMS != 0 && nowMS >= a.endMS {
			r.ov.stats.expired++
			if a.limit.Spec().Carry == carry.Reset {
				r.ov.stats.resetEnds++
			}
			delete(r.ov.active, k)
		}
	}
	if o.kind == opOverride || o.kind == opClear || o.kind == opReset {
		return
	}
	var labels []string
	for _, d := range r.sets[o.set] {
		if _, ok := r.ov.active[okey{o.sub, d.l.Spec().ID}]; ok && !slices.Contains(labels, carryLabel(d.l)) {
			labels = append(labels, carryLabel(d.l))
		}
	}
	if len(labels) > 0 {
		r.ov.stats.steps++
		for _, l := range labels {
			r.ov.stats.inForce[l]++
		}
	}
}

// inForce returns the limit in force of l for subject sub by the overrides
// the test set (countOverrides has dropped those that ended): l with the
// override's numbers, no block if l has none, or l when none is in force
// or its numbers are not valid for l.
func (r *diffRun) inForce(sub int, l ratekit.Limit) (ratekit.Limit, bool) {
	a, ok := r.ov.active[okey{sub, l.Spec().ID}]
	if !ok {
		return l, false
	}
	sp, on := l.Spec(), a.limit.Spec()
	sp.Quota, sp.Rate, sp.Window, sp.MaxWait, sp.Block, sp.Factor = on.Quota, on.Rate, on.Window, on.MaxWait, on.Block, on.Factor
	if l.Spec().Block == 0 {
		sp.Block = 0
	}
	in, err := l.With(sp)
	if err != nil {
		return l, false
	}
	return in, true
}

// checkInForce compares the limits in force of memstore's decision d
// (redisstore's is compared with it) with the overrides the test set.
func (r *diffRun) checkInForce(o dop, d ratekit.Decision) (out []string) {
	set := r.sets[o.set]
	sts := statesOf(d)
	if len(sts) != len(set) {
		return nil // diffDecisions says so
	}
	for i, st := range sts {
		want, _ := r.inForce(o.sub, set[i].l)
		if st.Limit.Spec() != want.Spec() {
			out = append(out, fmt.Sprintf("States[%d] (%s).Limit in force: %s, the overrides set say %s", i, set[i].l.Name(), numbersOf(st.Limit), numbersOf(want)))
		}
	}
	return out
}

// A listed is one override ListOverrides reported.
type listed struct {
	sub     string
	limit   ratekit.Limit
	expires time.Time
}

func (x listed) String() string {
	e := "none"
	if !x.expires.IsZero() {
		e = x.expires.UTC().Format("15:04:05.000000")
	}
	return fmt.Sprintf("%q %s ends %s", trunc(x.sub), numbersOf(x.limit), e)
}

func trunc(s string) string {
	if len(s) > 12 {
		return fmt.Sprintf("%x…", s[:6])
	}
	return s
}

// compareLists compares both stores' ListOverrides of the limits of step
// o's set, for its subject and for every subject, with each other and with
// the overrides the test set, in a sequence that has set some.
func (r *diffRun) compareLists(ctx context.Context, o dop) (out []string) {
	if r.ov.stats.set == 0 && len(r.ov.active) == 0 {
		return nil
	}
	ls := r.limits[o.set]
	for _, sub := range []int{o.sub, -1} {
		subject := ""
		if sub >= 0 {
			subject = diffSubjects[sub]
		}
		var lm, lr []listed
		em := r.mem.ListOverrides(ctx, subject, ls, func(s string, l ratekit.Limit, e time.Time) { lm = append(lm, listed{s, l, e}) })
		er := r.env.red.ListOverrides(ctx, subject, ls, func(s string, l ratekit.Limit, e time.Time) { lr = append(lr, listed{s, l, e}) })
		if em != nil || er != nil {
			out = append(out, fmt.Sprintf("ListOverrides(%q): mem %v, redis %v", trunc(subject), em, er))
			continue
		}
		r.ov.stats.lists++
		r.ov.stats.listed += len(lm)
		// the oracle: by subject, then in the order of ls
		var want []listed
		subs := slices.Clone(diffSubjects)
		slices.Sort(subs)
		for _, s := range subs {
			si := slices.Index(diffSubjects, s)
			if sub >= 0 && si != sub {
				continue
			}
			for _, l := range ls {
				a, ok := r.ov.active[okey{si, l.Spec().ID}]
				if !ok {
					continue
				}
				in, _ := r.inForce(si, l)
				var e time.Time
				if a.endMS != 0 {
					e = time.UnixMilli(a.endMS)
				}
				want = append(want, listed{s, in, e})
			}
		}
		same := func(a, b []listed) bool {
			return slices.EqualFunc(a, b, func(x, y listed) bool {
				return x.sub == y.sub && x.limit.Spec() == y.limit.Spec() && x.expires.Equal(y.expires)
			})
		}
		if !same(lm, lr) || !same(lm, want) {
			out = append(out, fmt.Sprintf("ListOverrides(%q):\n\t\tmem   %v\n\t\tredis %v\n\t\twant  %v", trunc(subject), lm, lr, want))
		}
	}
	return out
}
