package redisstore_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/store/memstore"
)

// This file generates the differential test's changes of numbers: a limit's
// state is identified by its name and algorithm (and shape: a sliding or
// Suppressed bucket width, a calendar's period and zone), not its numbers,
// so new numbers under the same name keep the state (carry.Used), and
// carry.Reset starts fresh state on new numbers. A share of the sequences
// (diffCarryShare) get one to three variants of their limit sets: the same
// limits, names, algorithms and shapes in the same order, with other
// numbers (quota, burst, rate, window, block, lease, queue wait) and at
// times another carry rule. The sets of a sequence are its base sets (set 0
// and its part, as before), then each variant of them in turn: set s is
// variant s / nbase of base set s % nbase. A step picks a base set as
// before, then the numbers in force (which change now and then, as a
// deploy does) or, now and then, other numbers (another instance); a
// settle, release or renew goes to the set its receipt was made with or,
// now and then, to a variant of it. Those choices come from a second
// random stream, so a sequence without variants is the one it was before.

const (
	diffCarryShare  = 50 // percent of the sequences with variants of their sets
	diffCarryDeploy = 15 // percent of the steps that first change the numbers in force
	diffCarryOther  = 35 // percent of the steps that use other numbers than those in force
	diffCarryCross  = 50 // percent of the settles, releases and renews sent to another variant
)

// dnums are a limit's numbers and shape, as vary changes them and build
// makes them a limit and its code.
type dnums struct {
	name      string
	alg       string
	quota     int64         // quota, burst, capacity, soft limit, slots
	rate      float64       // a bucket's rate
	window    time.Duration // window, a bucket's period, a lease
	precision time.Duration // a sliding window's bucket width
	wait      time.Duration // a leaky bucket's longest queue wait
	block     time.Duration
	factor    float64
	period    calendar.Period
	zone      string // a Calendar's zone, "" for calendar.Every
	reset     bool   // carry.Reset
}

func numsOf(l ratekit.Limit) dnums {
	sp := l.Spec()
	n := dnums{name: sp.Name, alg: sp.Algorithm, quota: sp.Quota, rate: sp.Rate, window: sp.Window, precision: sp.Precision,
		wait: sp.MaxWait, block: sp.Block, factor: sp.Factor, period: sp.Period, reset: sp.Carry == carry.Reset}
	if sp.Location != nil {
		n.zone = sp.Location.String()
	}
	return n
}

// build returns the limit n describes and its code.
func (n dnums) build() dlimit {
	var l ratekit.Limit
	var code string
	switch n.alg {
	case "fixed":
		l, code = ratekit.FixedWindow(n.quota, n.window), fmt.Sprintf("ratekit.FixedWindow(%d, %s)", n.quota, durCode(n.window))
	case "calendar":
		if d, every := n.period.Window(); every {
			l, code = ratekit.Calendar(n.quota, n.period, nil), fmt.Sprintf("ratekit.Calendar(%d, calendar.Every(%s), nil)", n.quota, durCode(d))
		} else {
			l = ratekit.Calendar(n.quota, n.period, diffZone(n.zone))
			code = fmt.Sprintf("ratekit.Calendar(%d, %s, diffZone(%q))", n.quota, periodCode(n.period), n.zone)
		}
	case "sliding":
		l = ratekit.SlidingWindow(n.quota, n.window).Precision(n.precision)
		code = fmt.Sprintf("ratekit.SlidingWindow(%d, %s).Precision(%s)", n.quota, durCode(n.window), durCode(n.precision))
	case "log":
		l, code = ratekit.SlidingLog(n.quota, n.window), fmt.Sprintf("ratekit.SlidingLog(%d, %s)", n.quota, durCode(n.window))
	case "gcra", "token":
		args := fmt.Sprintf("%s, %s, %d", fmtRate(n.rate), durCode(n.window), n.quota)
		if n.alg == "gcra" {
			l, code = ratekit.GCRA(n.rate, n.window, n.quota), "ratekit.GCRA("+args+")"
		} else {
			l, code = ratekit.TokenBucket(n.rate, n.window, n.quota), "ratekit.TokenBucket("+args+")"
		}
	case "leaky":
		l = ratekit.LeakyBucket(n.quota, n.rate, n.window)
		code = fmt.Sprintf("ratekit.LeakyBucket(%d, %s, %s)", n.quota, fmtRate(n.rate), durCode(n.window))
		if n.wait > 0 {
			l, code = l.Queue(n.wait), code+fmt.Sprintf(".Queue(%s)", durCode(n.wait))
		}
	case "suppressed":
		l = ratekit.Suppressed(n.quota, n.window, n.factor)
		code = fmt.Sprintf("ratekit.Suppressed(%d, %s, %g)", n.quota, durCode(n.window), n.factor)
	case "inflight":
		l, code = ratekit.InFlight(n.quota).Lease(n.window), fmt.Sprintf("ratekit.InFlight(%d).Lease(%s)", n.quota, durCode(n.window))
	default:
		panic("no variants of algorithm " + n.alg)
	}
	if n.block > 0 {
		l, code = l.Block(n.block), code+fmt.Sprintf(".Block(%s)", durCode(n.block))
	}
	l, code = l.Named(n.name), code+fmt.Sprintf(".Named(%q)", n.name)
	if n.reset {
		l, code = l.Carry(carry.Reset), code+".Carry(carry.Reset)"
	}
	return dlimit{l, code}
}

// checkStore validates generated limits (ratekit.New checks them).
var checkStore = sync.OnceValue(func() *memstore.Store { return memstore.New() })

func valid(l ratekit.Limit) bool {
	_, err := ratekit.New(checkStore(), l)
	return err == nil
}

// newQuota returns another quota than q: raised, cut, 1, or any up to 8.
func newQuota(rng *rand.Rand, q int64) int64 {
	for {
		v := []int64{q + 1, q + 1 + rng.Int64N(4), q - 1, q - 1 - rng.Int64N(3), q * 2, q / 2, 1, 1 + rng.Int64N(8)}[rng.IntN(8)]
		if v >= 1 && v != q {
			return v
		}
	}
}

// vary returns n with other numbers, the same name, algorithm and shape:
// each number of its algorithm changes with even odds, one at least. long
// keeps every time a whole part of an hour and a bucket's interval (see
// genLongLimit), so that nothing turns on the microseconds between two
// stores' calls.
func vary(rng *rand.Rand, n dnums, long bool) dnums {
	for range 50 {
		v := varyOnce(rng, n, long)
		if v != n && valid(v.build().l) {
			return v
		}
	}
	return n
}

func varyOnce(rng *rand.Rand, n dnums, long bool) dnums {
	pickMS := func(xs ...int) time.Duration { return time.Duration(xs[rng.IntN(len(xs))]) * ms }
	coin := func() bool { return rng.IntN(2) == 0 }
	v := n
	if coin() {
		v.quota = newQuota(rng, n.quota)
	}
	switch n.alg {
	case "fixed", "log":
		if coin() {
			v.window = pickMS(1, 2, 3, 5, 8, 10, 20, 40)
			if long {
				v.window = []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour}[rng.IntN(3)]
			}
		}
	case "sliding":
		if coin() {
			v.window = n.precision * time.Duration([]int{1, 2, 3, 4, 5, 10}[rng.IntN(6)])
			if long {
				v.window = n.precision * time.Duration([]int{5, 10, 20}[rng.IntN(3)])
			}
		}
	case "gcra", "token", "leaky":
		switch k := rng.IntN(4); {
		case long: // the burst alone: the same interval, so the TAT stands
		case k == 0: // the same interval in other words: the TAT stands
			f := float64(2 + rng.IntN(2))
			v.rate, v.window = n.rate*f, n.window*time.Duration(f)
		case k == 1:
			v.rate = []float64{0.5, 1, 2, 2.5, 3, 7}[rng.IntN(6)]
		case k == 2:
			v.window = pickMS(2, 5, 10, 20, 30)
		default:
			v.rate, v.window = []float64{0.5, 1, 2, 2.5, 3, 7}[rng.IntN(6)], pickMS(2, 5, 10, 20, 30)
		}
		if n.alg == "leaky" && coin() {
			interval := ratekit.LeakyBucket(v.quota, v.rate, v.window).Spec().Interval
			switch rng.IntN(4) {
			case 0: // meter mode
				v.wait = 0
			case 1:
				v.wait = pickMS(1, 2, 3, 5, 10, 25)
			default: // around whole intervals, as genLimit
				v.wait = max(interval*time.Duration(1+rng.IntN(3)), time.Millisecond).Round(time.Millisecond)
				v.wait = max(v.wait+pickMS(-1, 0, 0, 1), time.Millisecond)
			}
			if long {
				v.wait = interval * time.Duration(rng.IntN(4)) // 0: meter mode
			}
		}
	case "suppressed":
		if coin() {
			v.factor = []float64{1, 1.5, 2, 3}[rng.IntN(4)]
		}
		if coin() { // another window of the same bucket width: w and w/10, w and 10w
			var alts []time.Duration
			for _, w := range []time.Duration{n.window / 10, n.window * 10} {
				if w >= time.Millisecond && w%time.Millisecond == 0 && w <= time.Second && defaultWidth(w) == n.precision {
					alts = append(alts, w)
				}
			}
			if len(alts) > 0 {
				v.window = alts[rng.IntN(len(alts))]
			}
		}
	case "inflight":
		if coin() {
			v.window = pickMS(10, 11, 15, 20, 40)
			if long {
				v.window = []time.Duration{30 * time.Minute, 2 * time.Hour}[rng.IntN(2)]
			}
		}
	}
	if n.alg != "inflight" && rng.IntN(3) == 0 {
		switch {
		case coin():
			v.block = 0
		case long:
			v.block = []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour}[rng.IntN(3)]
		case n.alg == "calendar" && (n.zone != "" || n.window >= time.Second): // as blockSlow
			w := n.window
			v.block = []time.Duration{2 * ms, 25 * ms, time.Second, (w / 10).Round(ms), (w / 2).Round(ms), w + time.Second}[rng.IntN(6)]
		default:
			v.block = pickMS(1, 2, 3, 5, 10, 25)
		}
	}
	return v
}

// defaultWidth is algo.DefaultWidth: a Suppressed limit's bucket width.
func defaultWidth(w time.Duration) time.Duration {
	if w%(10*time.Millisecond) == 0 {
		return w / 10
	}
	return w
}

// withVariants returns sets (the base sets) and 1 to 3 variants of them,
// diffCarryShare percent of the time (else sets alone), and the number of
// variants. A variant keeps each limit's name, algorithm and shape; three
// times in four it gives it other numbers (vary), and one time in seven it
// flips its carry rule. Before the variants, one base limit in eight
// becomes carry.Reset.
func withVariants(rng *rand.Rand, sets [][]dlimit, long bool) ([][]dlimit, int) {
	if rng.IntN(100) >= diffCarryShare {
		return sets, 0
	}
	reset := map[string]bool{}
	for _, d := range sets[0] {
		if rng.IntN(8) == 0 {
			reset[d.l.Name()] = true
		}
	}
	if len(reset) > 0 {
		sets = mapSets(sets, func(d dlimit) dlimit {
			if reset[d.l.Name()] {
				return dlimit{d.l.Carry(carry.Reset), d.code + ".Carry(carry.Reset)"}
			}
			return d
		})
	}
	nv := []int{1, 1, 2, 2, 3}[rng.IntN(5)]
	out := sets
	for range nv {
		by := map[string]dlimit{}
		changed := false
		for _, d := range sets[0] {
			n := numsOf(d.l)
			v := n
			if rng.IntN(4) > 0 {
				v = vary(rng, n, long)
			}
			if rng.IntN(7) == 0 {
				v.reset = !v.reset
			}
			by[n.name] = d
			if v != n {
				by[n.name], changed = v.build(), true
			}
		}
		if !changed {
			d := sets[0][rng.IntN(len(sets[0]))]
			n := numsOf(d.l)
			v := vary(rng, n, long)
			if v == n {
				v.reset = !v.reset
			}
			by[n.name] = v.build()
		}
		out = append(out, mapSets(sets, func(d dlimit) dlimit { return by[d.l.Name()] })...)
	}
	return out, nv
}

// mapSets returns sets with f applied to every limit.
func mapSets(sets [][]dlimit, f func(dlimit) dlimit) [][]dlimit {
	out := make([][]dlimit, len(sets))
	for i, s := range sets {
		out[i] = make([]dlimit, len(s))
		for j, d := range s {
			out[i][j] = f(d)
		}
	}
	return out
}

// variants picks the sets of a sequence's steps: set s is variant s / nbase
// of base set s % nbase.
type variants struct {
	vrng  *rand.Rand // the stream that picks them
	nbase int        // the base sets (len(sets) in a replay)
	nvar  int        // the variants of the base sets
	cur   int        // the variant in force
}

// pickSet returns the set of a step about base set b: the variant of the
// numbers in force (changed first diffCarryDeploy percent of the time), or
// diffCarryOther percent of the time any variant.
func (v *variants) pickSet(b int) int {
	if v.nvar == 0 {
		return b
	}
	if v.vrng.IntN(100) < diffCarryDeploy {
		v.cur = v.vrng.IntN(v.nvar + 1)
	}
	k := v.cur
	if v.vrng.IntN(100) < diffCarryOther {
		k = v.vrng.IntN(v.nvar + 1)
	}
	return b + v.nbase*k
}

// settleSet returns the set a settle, release or renew of a receipt made
// with set s goes to: s, or diffCarryCross percent of the time a variant
// of it (s itself among them).
func (v *variants) settleSet(s int) int {
	if v.nvar == 0 || v.vrng.IntN(100) >= diffCarryCross {
		return s
	}
	return s%v.nbase + v.nbase*v.vrng.IntN(v.nvar+1)
}

// variantSpans returns the spans of set 0's variants.
func (r *diffRun) variantSpans(keep func(dlimit) bool) []time.Duration {
	var out []time.Duration
	for k := 1; k <= r.nvar; k++ {
		var ds []dlimit
		for _, d := range r.sets[k*r.nbase] {
			if keep(d) {
				ds = append(ds, d)
			}
		}
		out = append(out, spans(ds)...)
	}
	return out
}

// carryLabel names a limit's algorithm in the counts: leaky buckets in
// queue mode apart.
func carryLabel(l ratekit.Limit) string {
	sp := l.Spec()
	if sp.Algorithm == "leaky" && sp.MaxWait > 0 {
		return "leaky-queue"
	}
	return sp.Algorithm
}

// numbersOf describes l's numbers and carry rule.
func numbersOf(l ratekit.Limit) string {
	return l.String() + " carry " + l.Spec().Carry.String()
}

// carryStats are the counts of the changes of numbers of a run.
type carryStats struct {
	sequences int            // sequences with variants
	variant   int            // steps on a set whose numbers differ from its base set's
	changed   map[string]int // those steps, by the algorithm of a limit whose numbers differ
	met       int            // steps that met a live state last written under other numbers
	metBy     map[string]int // those steps, by the algorithm of such a limit
	cross     int            // settles, releases and renews sent to another set than their receipt's
	reset     int            // steps on a set with a carry.Reset limit, in sequences with variants
}

func (s *carryStats) add(o carryStats) {
	s.sequences += o.sequences
	s.variant += o.variant
	s.met += o.met
	s.cross += o.cross
	s.reset += o.reset
	for k, v := range o.changed {
		if s.changed == nil {
			s.changed = map[string]int{}
		}
		s.changed[k] += v
	}
	for k, v := range o.metBy {
		if s.metBy == nil {
			s.metBy = map[string]int{}
		}
		s.metBy[k] += v
	}
}

func (s carryStats) String() string {
	byAlg := func(m map[string]int) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%d sequences with changed numbers; %d steps on a set with changed numbers (%s); "+
		"%d steps that met a live state written under other numbers (%s); %d settles, releases and renews sent to a set with other numbers; "+
		"%d steps with a carry.Reset limit",
		s.sequences, s.variant, byAlg(s.changed), s.met, byAlg(s.metBy), s.cross, s.reset)
}

// countCarry adds step o, about to be played, to r's counts of changes of
// numbers: whether its set's numbers differ from its base set's, and which
// of its limits' live states were last written under other numbers.
func (r *diffRun) countCarry(o dop) {
	if r.nvar == 0 {
		return
	}
	set := r.sets[o.set]
	if o.kind == opSettle || o.kind == opRelease || o.kind == opRenew {
		if o.rc < len(r.pool) && r.pool[o.rc].set != o.set {
			r.carry.cross++
		}
	}
	base := r.sets[o.set%r.nbase]
	var changed, met []string
	withReset := false
	for i, d := range set {
		label := carryLabel(d.l)
		withReset = withReset || d.l.Spec().Carry == carry.Reset
		if numbersOf(d.l) != numbersOf(base[i].l) && !slices.Contains(changed, label) {
			changed = append(changed, label)
		}
		key := r.key(o.sub, d.l)
		if was, ok := r.written[key]; ok && was != numbersOf(d.l) && r.env.m.Exists(key) && !slices.Contains(met, label) {
			met = append(met, label)
		}
	}
	if withReset {
		r.carry.reset++
	}
	if len(changed) > 0 {
		r.carry.variant++
		for _, l := range changed {
			r.carry.changed[l]++
		}
	}
	if len(met) > 0 {
		r.carry.met++
		for _, l := range met {
			r.carry.metBy[l]++
		}
	}
}

// noteWrites records the numbers under which step o wrote its limits'
// states (a Reset forgets them).
func (r *diffRun) noteWrites(o dop) {
	if r.nvar == 0 || o.kind == opPeek || o.kind == opOverride || o.kind == opClear {
		return
	}
	for _, d := range r.sets[o.set] {
		key := r.key(o.sub, d.l)
		if o.kind == opReset {
			delete(r.written, key)
		} else {
			r.written[key] = numbersOf(d.l)
		}
	}
}

// TestDifferentialVariants checks the generator of variants: build makes
// a generated limit again from its numbers, and a variant keeps each
// limit's name, algorithm and shape (its ID, but under carry.Reset), in
// the order of its base set.
func TestDifferentialVariants(t *testing.T) {
	withNumbers := 0
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		var sets [][]dlimit
		long := seed%3 == 0
		switch seed % 3 {
		case 0:
			sets = genLongSets(rng, diffStart)
		case 1:
			sets = genSets(rng)
		default:
			sets, _ = genCalendarSets(rng)
		}
		for _, d := range sets[0] {
			if b := numsOf(d.l).build(); b.l.Spec().ID != d.l.Spec().ID || numbersOf(b.l) != numbersOf(d.l) {
				t.Fatalf("seed %d: %s rebuilt as %s (%s, %s)", seed, d.code, b.code, numbersOf(d.l), numbersOf(b.l))
			}
		}
		nbase := len(sets)
		all, nvar := withVariants(rand.New(rand.NewPCG(seed, 0xca44)), sets, long)
		if len(all) != nbase*(nvar+1) {
			t.Fatalf("seed %d: %d sets, %d base sets, %d variants", seed, len(all), nbase, nvar)
		}
		for s := nbase; s < len(all); s++ {
			base := all[s%nbase]
			if len(all[s]) != len(base) {
				t.Fatalf("seed %d: set %d has %d limits, its base set %d", seed, s, len(all[s]), len(base))
			}
			for i, d := range all[s] {
				a, b := d.l.Spec(), base[i].l.Spec()
				if a.Name != b.Name || a.Algorithm != b.Algorithm || a.Precision != b.Precision || a.Period != b.Period || a.Location.String() != b.Location.String() {
					t.Fatalf("seed %d: set %d: %s is no variant of %s", seed, s, d.code, base[i].code)
				}
				if a.Carry == carry.Used && b.Carry == carry.Used && a.ID != b.ID {
					t.Fatalf("seed %d: set %d: %s has ID %s, %s %s", seed, s, d.code, a.ID, base[i].code, b.ID)
				}
				if numbersOf(d.l) != numbersOf(base[i].l) {
					withNumbers++
				}
			}
		}
	}
	if withNumbers == 0 {
		t.Fatal("no variant has other numbers")
	}
}
