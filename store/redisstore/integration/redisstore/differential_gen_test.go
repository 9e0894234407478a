package redisstore_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
)

// This file generates the random, seeded sequences of the differential
// test (differential_test.go): limit sets and operations.

// A dlimit is a generated limit and the Go expression that builds it, for
// replays.
type dlimit struct {
	l    ratekit.Limit
	code string
}

// dkind is the kind of one operation of a sequence.
type dkind uint8

const (
	opTake dkind = iota
	opPeek
	opReset
	opReserve
	opSettle  // settle receipt rc to cost
	opRelease // settle receipt rc to its own cost
	opRenew
	opOverride // set subject sub's override of limit lim of set set to over's numbers, for exp
	opClear    // clear subject sub's override of limit lim of set set
)

var dkindNames = [...]string{"opTake", "opPeek", "opReset", "opReserve", "opSettle", "opRelease", "opRenew", "opOverride", "opClear"}

// A dop is one step of a sequence: advance the clock, then call both
// stores about subject sub with limit set set (settle, release and renew:
// receipt rc of the pool, with the receipt's subject, and its set or a
// variant of it with other numbers: see differential_carry_test.go;
// override and clear: limit lim of set set, see
// differential_override_test.go).
type dop struct {
	adv  time.Duration
	kind dkind
	sub  int
	set  int
	cost int64
	rc   int
	draw float64 // the uniform draw both stores get (Suppressed limits)

	lim  int           // opOverride, opClear: the limit's index in set set
	over ratekit.Limit // opOverride: the numbers (the limit in force is the set's limit With them)
	exp  time.Duration // opOverride: the expiry (0: until cleared)
}

// String writes o as a Go literal, so that a failing sequence's steps can
// be pasted into differentialReplays.
func (o dop) String() string {
	switch o.kind {
	case opOverride:
		return fmt.Sprintf("{adv: %s, kind: opOverride, sub: %d, set: %d, lim: %d, over: %s, exp: %s}",
			durCode(o.adv), o.sub, o.set, o.lim, numsOf(o.over).build().code, durCode(o.exp))
	case opClear:
		return fmt.Sprintf("{adv: %s, kind: opClear, sub: %d, set: %d, lim: %d}", durCode(o.adv), o.sub, o.set, o.lim)
	}
	s := fmt.Sprintf("{adv: %s, kind: %s, sub: %d, set: %d, cost: %d, rc: %d", durCode(o.adv), dkindNames[o.kind], o.sub, o.set, o.cost, o.rc)
	if o.draw != 0 {
		s += fmt.Sprintf(", draw: %v", o.draw)
	}
	return s + "}"
}

// durCode writes d as a Go expression.
func durCode(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%time.Hour == 0:
		return fmt.Sprintf("%d * time.Hour", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d * time.Minute", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%d * time.Second", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%d * time.Millisecond", d/time.Millisecond)
	}
	return fmt.Sprintf("%d * time.Microsecond", d/time.Microsecond)
}

// genLimit returns a random limit named name, of any algorithm, with small
// quotas and windows of a few milliseconds, so that windows, leases and
// blocks pass during a sequence.
func genLimit(rng *rand.Rand, name string) dlimit {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	var l ratekit.Limit
	var code string
	switch rng.IntN(9) {
	case 0:
		q, w := int64(1+rng.IntN(6)), ms(pick(1, 2, 3, 5, 8, 10, 20, 40))
		l, code = ratekit.FixedWindow(q, w), fmt.Sprintf("ratekit.FixedWindow(%d, %s)", q, durCode(w))
		if rng.IntN(3) == 0 { // windows on multiples of w since the epoch
			l, code = ratekit.Calendar(q, calendar.Every(w), nil), fmt.Sprintf("ratekit.Calendar(%d, calendar.Every(%s), nil)", q, durCode(w))
		}
	case 1:
		width, n, q := pick(1, 2, 3, 5, 10), pick(1, 2, 3, 4, 5, 10), int64(1+rng.IntN(8))
		l = ratekit.SlidingWindow(q, ms(width*n)).Precision(ms(width))
		code = fmt.Sprintf("ratekit.SlidingWindow(%d, %s).Precision(%s)", q, durCode(ms(width*n)), durCode(ms(width)))
	case 2:
		q, w := int64(1+rng.IntN(6)), ms(pick(1, 2, 3, 5, 8, 10, 20, 40))
		l, code = ratekit.SlidingLog(q, w), fmt.Sprintf("ratekit.SlidingLog(%d, %s)", q, durCode(w))
	case 3, 4, 5, 6:
		rate := []float64{0.5, 1, 2, 2.5, 3, 7}[rng.IntN(6)]
		per, burst := ms(pick(2, 5, 10, 20, 30)), int64(1+rng.IntN(5))
		args := fmt.Sprintf("%s, %s, %d", fmtRate(rate), durCode(per), burst)
		switch rng.IntN(3) {
		case 0:
			l, code = ratekit.GCRA(rate, per, burst), "ratekit.GCRA("+args+")"
		case 1:
			l, code = ratekit.TokenBucket(rate, per, burst), "ratekit.TokenBucket("+args+")"
		default:
			l = ratekit.LeakyBucket(burst, rate, per)
			code = fmt.Sprintf("ratekit.LeakyBucket(%d, %s, %s)", burst, fmtRate(rate), durCode(per))
			if rng.IntN(2) == 0 { // queue mode: waits around whole intervals
				interval := l.Spec().Interval
				wait := max(interval*time.Duration(1+rng.IntN(3)), time.Millisecond).Round(time.Millisecond)
				wait += ms(pick(-1, 0, 0, 1))
				wait = max(wait, time.Millisecond)
				l, code = l.Queue(wait), code+fmt.Sprintf(".Queue(%s)", durCode(wait))
			}
		}
	case 7:
		soft, w, f := int64(1+rng.IntN(5)), ms(pick(5, 10, 20, 30, 50)), []float64{1, 1.5, 2, 3}[rng.IntN(4)]
		l, code = ratekit.Suppressed(soft, w, f), fmt.Sprintf("ratekit.Suppressed(%d, %s, %g)", soft, durCode(w), f)
	default:
		n, lease := int64(1+rng.IntN(3)), ms(pick(10, 11, 15, 20, 40))
		l, code = ratekit.InFlight(n).Lease(lease), fmt.Sprintf("ratekit.InFlight(%d).Lease(%s)", n, durCode(lease))
	}
	if !l.Spec().Concurrent && rng.IntN(4) == 0 {
		b := ms(pick(1, 2, 3, 5, 10, 25))
		l, code = l.Block(b), code+fmt.Sprintf(".Block(%s)", durCode(b))
	}
	return dlimit{l.Named(name), code + fmt.Sprintf(".Named(%q)", name)}
}

func fmtRate(r float64) string { return fmt.Sprintf("%g", r) }

// suppressed reports whether set has a Suppressed limit.
func suppressed(set []dlimit) bool {
	for _, d := range set {
		if d.l.Spec().Algorithm == "suppressed" {
			return true
		}
	}
	return false
}

// genSets returns a sequence's limit sets: set 0 holds 1 to 4 random
// limits; set 1, sometimes, a random part of them in a random order, so
// that calls with different sets share the state of their common limits.
func genSets(rng *rand.Rand) [][]dlimit {
	n := []int{1, 1, 1, 2, 2, 2, 3, 3, 4, 4}[rng.IntN(10)]
	all := make([]dlimit, n)
	for i := range all {
		all[i] = genLimit(rng, fmt.Sprintf("a%d", i))
	}
	sets := [][]dlimit{all}
	if n > 1 && rng.IntN(3) == 0 {
		part := append([]dlimit(nil), all...)
		rng.Shuffle(len(part), func(i, j int) { part[i], part[j] = part[j], part[i] })
		sets = append(sets, part[:1+rng.IntN(n)])
	}
	return sets
}

// limitsOf returns the limits of a set.
func limitsOf(set []dlimit) []ratekit.Limit {
	out := make([]ratekit.Limit, len(set))
	for i, d := range set {
		out[i] = d.l
	}
	return out
}

// setsCode writes sets as a Go expression.
func setsCode(sets [][]dlimit) string {
	var b strings.Builder
	b.WriteString("[][]ratekit.Limit{\n")
	for _, set := range sets {
		b.WriteString("\t{")
		for i, d := range set {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(d.code)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}")
	return b.String()
}

// maxQuota is the largest quota (a bucket's burst, an in-flight limit's
// slots) of a set: costs run from 0 to it + 2.
func maxQuota(set []dlimit) int64 {
	q := int64(1)
	for _, d := range set {
		q = max(q, d.l.Spec().Quota)
	}
	return q
}

// spans returns the lengths that matter to a set's limits: windows,
// bucket widths, leases, blocks, queue waits, a bucket's interval and the
// time it takes to fill. Clock steps of these lengths (and ±1 ms, ±1 µs)
// hit the limits' boundaries.
func spans(set []dlimit) []time.Duration {
	var out []time.Duration
	for _, d := range set {
		sp := d.l.Spec()
		out = append(out, sp.Window)
		for _, x := range []time.Duration{sp.Precision, sp.Block, sp.MaxWait, sp.Interval, sp.Interval * time.Duration(sp.Quota)} {
			if x > 0 {
				out = append(out, x)
			}
		}
	}
	return out
}

// genStep returns a random clock step: 0, 1 ms, one of the spans of the
// limits or of the last decision (ResetAfter, RetryAfter, ...) exactly or
// ±1 ms or ±1 µs, a random time up to the longest span, a few µs, or a jump
// past everything.
func genStep(rng *rand.Rand, lengths []time.Duration) time.Duration {
	longest := time.Millisecond
	for _, x := range lengths {
		longest = max(longest, x)
	}
	switch r := rng.IntN(100); {
	case r < 22:
		return 0
	case r < 32:
		return time.Millisecond
	case r < 72 && len(lengths) > 0:
		x := lengths[rng.IntN(len(lengths))]
		x += []time.Duration{0, 0, 0, -time.Millisecond, time.Millisecond, -time.Microsecond, time.Microsecond}[rng.IntN(7)]
		return max(x, 0)
	case r < 88:
		return time.Duration(rng.Int64N(int64(longest/time.Millisecond)+1)) * time.Millisecond
	case r < 96:
		return time.Duration(1+rng.IntN(1500)) * time.Microsecond
	}
	return 2*longest + time.Millisecond
}

// genCost returns a random cost from 0 to q + 2.
func genCost(rng *rand.Rand, q int64) int64 {
	return rng.Int64N(q + 3)
}

// genSettleCost returns a random cost to settle a receipt of cost was to:
// 0, its own, just above it, above the quota q, or any.
func genSettleCost(rng *rand.Rand, was, q int64) int64 {
	switch rng.IntN(6) {
	case 0:
		return 0
	case 1:
		return was
	case 2:
		return was + 1 + rng.Int64N(3)
	case 3:
		return q + 1 + rng.Int64N(2)
	}
	return rng.Int64N(q + 3)
}
