package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/store/storetest"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestDifferentialRealRedis plays random sequences of every store.Settler
// operation, with random costs, on memstore (on the wall clock) and on a
// real redis-server (on its own clock, with Redis Functions where the
// server has them). The two clocks cannot be shared, so every limit is an
// hour long (windows, periods, leases, blocks) or a Calendar day, week,
// month or year in one of diffZones, or an hour aligned to the clock, whose
// period does not end within 10 minutes: nothing the sequences see
// depends on the milliseconds between the two stores' calls, and the
// answers that depend only on counts must be equal: Allowed, Remaining,
// Unsatisfiable and Blocked, limit by limit; the binding limit's Remaining
// when admitted; receipts' costs and what each limit holds; Renew. As in
// TestDifferentialRandom, some sequences change their limits' numbers
// (withVariants), to times that are hours or whole parts of one, and
// buckets' bursts alone (their intervals stay).
func TestDifferentialRealRedis(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	red := newStore(t, c, redistest.Prefix(t))
	mem := memstore.New()
	t.Cleanup(func() { mem.Close() })
	const sequences, steps = 200, 40
	withNumbers, onVariants := 0, 0
	for seed := uint64(1); seed <= sequences; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0x4ea1))
		sets := genLongSets(rng, time.Now())
		vrng := rand.New(rand.NewPCG(seed, 0xca44))
		nbase := len(sets)
		sets, nvar := withVariants(vrng, sets, true)
		v := variants{vrng: vrng, nbase: nbase, nvar: nvar}
		if nvar > 0 {
			withNumbers++
		}
		var limits [][]ratekit.Limit
		for _, s := range sets {
			ls := limitsOf(s)
			if _, err := ratekit.New(mem, ls...); err != nil {
				t.Fatalf("seed %d: generated limits are invalid: %v\n%s", seed, err, setsCode(sets))
			}
			limits = append(limits, ls)
		}
		subjects := []string{fmt.Sprintf("s%d", seed), strings.Repeat("long-subject-", 6) + fmt.Sprint(seed)}
		var pool []rpair
		var ops []dop
		fail := func(msgs []string, dm, dr ratekit.Decision) {
			t.Helper()
			var b strings.Builder
			for i, o := range ops {
				fmt.Fprintf(&b, "\t\t%v, // #%d\n", o, i)
			}
			t.Fatalf("seed %d, step %d %v: memstore and redis-server differ:\n\t%s\nmem:   %s\nredis: %s\nlimits: %s\nops: []dop{\n%s\t}",
				seed, len(ops)-1, ops[len(ops)-1], strings.Join(msgs, "\n\t"), fmtDecision(dm, nil), fmtDecision(dr, nil), setsCode(sets), b.String())
		}
		ctx := context.Background()
		for range steps {
			o := dop{sub: rng.IntN(len(subjects)), set: v.pickSet(rng.IntN(nbase))}
			k := rng.IntN(100)
			if k >= 60 && len(pool) > 0 {
				o.rc = rng.IntN(len(pool))
				o.sub, o.set = pool[o.rc].sub, v.settleSet(pool[o.rc].set)
			}
			if o.set >= nbase {
				onVariants++
			}
			q := maxQuota(sets[o.set])
			switch {
			case k < 28:
				o.kind, o.cost = opTake, genCost(rng, q)
			case k < 36:
				o.kind = opPeek
			case k < 38:
				o.kind = opReset
			case k < 60 || len(pool) == 0:
				o.kind, o.cost = opReserve, genCost(rng, q)
			case k < 80:
				o.kind, o.cost = opSettle, genSettleCost(rng, pool[o.rc].mem.Cost, q)
			case k < 90:
				o.kind = opRelease
			default:
				o.kind = opRenew
			}
			ops = append(ops, o)
			sub, ls, set := subjects[o.sub], limits[o.set], sets[o.set]
			var dm, dr ratekit.Decision
			var em, er error
			var msgs []string
			switch o.kind {
			case opTake:
				dm, em = storetest.Take(ctx, mem, sub, ls, o.cost)
				dr, er = storetest.Take(ctx, red, sub, ls, o.cost)
			case opPeek:
				dm, em = storetest.Peek(ctx, mem, sub, ls)
				dr, er = storetest.Peek(ctx, red, sub, ls)
			case opReset:
				em, er = storetest.Reset(ctx, mem, sub, ls), storetest.Reset(ctx, red, sub, ls)
			case opReserve:
				dm, em = storetest.Reserve(ctx, mem, sub, ls, o.cost)
				dr, er = storetest.Reserve(ctx, red, sub, ls, o.cost)
			case opSettle, opRelease:
				p := pool[o.rc]
				cost := o.cost
				if o.kind == opRelease {
					cost = p.mem.Cost
				}
				em, er = storetest.Settle(ctx, mem, sub, ls, p.mem, cost), storetest.Settle(ctx, red, sub, ls, p.red, cost)
				msgs = countReceipts(set, p.mem, p.red)
				if o.kind == opRelease {
					pool = append(pool[:o.rc], pool[o.rc+1:]...)
				}
			case opRenew:
				p := pool[o.rc]
				hm, e1 := storetest.Renew(ctx, mem, sub, ls, p.mem)
				hr, e2 := storetest.Renew(ctx, red, sub, ls, p.red)
				em, er = e1, e2
				msgs = differ(msgs, "Renew", hm, hr)
			}
			if (em == nil) != (er == nil) {
				msgs = append(msgs, fmt.Sprintf("error: mem %v, redis %v", em, er))
			}
			if o.kind == opTake || o.kind == opPeek || o.kind == opReserve {
				msgs = append(msgs, countDecisions(set, dm, dr)...)
			}
			if len(msgs) > 0 {
				fail(msgs, dm, dr)
			}
			if o.kind == opReserve && dm.Receipt != nil && dr.Receipt != nil {
				pool = append(pool, rpair{mem: dm.Receipt, red: dr.Receipt, sub: o.sub, set: o.set})
				if len(pool) > diffPool {
					pool = pool[1:]
				}
			}
		}
	}
	t.Logf("%d sequences, %d with variants of their limits' numbers; %d steps on a variant", sequences, withNumbers, onVariants)
}

// genLongSets is genSets with hour-long limits (see genLongLimit).
func genLongSets(rng *rand.Rand, now time.Time) [][]dlimit {
	n := 1 + rng.IntN(4)
	all := make([]dlimit, n)
	for i := range all {
		all[i] = genLongLimit(rng, fmt.Sprintf("a%d", i), now)
	}
	sets := [][]dlimit{all}
	if n > 1 && rng.IntN(3) == 0 {
		part := append([]dlimit(nil), all...)
		rng.Shuffle(len(part), func(i, j int) { part[i], part[j] = part[j], part[i] })
		sets = append(sets, part[:1+rng.IntN(n)])
	}
	return sets
}

// genLongLimit returns a random limit named name whose every time is an
// hour or a whole part of one: a bucket's interval divides the hour, and a
// queue's longest wait is a whole number of intervals, so no decision
// turns on the microseconds between two calls; or a Calendar day, week,
// month or year, or an hour aligned to the clock, whose period holding now
// lasts 10 minutes more at least (else an hour's fixed window).
func genLongLimit(rng *rand.Rand, name string, now time.Time) dlimit {
	const h = time.Hour
	var l ratekit.Limit
	var code string
	switch k := rng.IntN(9); k {
	case 0:
		q := int64(1 + rng.IntN(6))
		l, code = ratekit.FixedWindow(q, h), fmt.Sprintf("ratekit.FixedWindow(%d, time.Hour)", q)
	case 1:
		q := int64(1 + rng.IntN(8))
		l, code = ratekit.SlidingWindow(q, h), fmt.Sprintf("ratekit.SlidingWindow(%d, time.Hour)", q)
	case 2:
		q := int64(1 + rng.IntN(6))
		l, code = ratekit.SlidingLog(q, h), fmt.Sprintf("ratekit.SlidingLog(%d, time.Hour)", q)
	case 3, 4, 5:
		rate, burst := float64(1+rng.IntN(6)), int64(1+rng.IntN(5))
		args := fmt.Sprintf("%g, time.Hour, %d", rate, burst)
		switch rng.IntN(3) {
		case 0:
			l, code = ratekit.GCRA(rate, h, burst), "ratekit.GCRA("+args+")"
		case 1:
			l, code = ratekit.TokenBucket(rate, h, burst), "ratekit.TokenBucket("+args+")"
		default:
			l, code = ratekit.LeakyBucket(burst, rate, h), fmt.Sprintf("ratekit.LeakyBucket(%d, %g, time.Hour)", burst, rate)
			if rng.IntN(2) == 0 {
				wait := l.Spec().Interval * time.Duration(1+rng.IntN(3))
				l, code = l.Queue(wait), code+fmt.Sprintf(".Queue(%s)", durCode(wait))
			}
		}
	case 7, 8:
		q := int64(1 + rng.IntN(6))
		if k == 7 {
			p, z := diffPeriods[2+rng.IntN(len(diffPeriods)-2)], diffZones[rng.IntN(len(diffZones))]
			l, code = ratekit.Calendar(q, p, diffZone(z)), fmt.Sprintf("ratekit.Calendar(%d, %s, diffZone(%q))", q, periodCode(p), z)
		} else {
			l, code = ratekit.Calendar(q, calendar.Every(h), nil), fmt.Sprintf("ratekit.Calendar(%d, calendar.Every(time.Hour), nil)", q)
		}
		if _, end := calPeriodOf(l, now); end.Sub(now) < 10*time.Minute {
			l, code = ratekit.FixedWindow(q, h), fmt.Sprintf("ratekit.FixedWindow(%d, time.Hour)", q)
		}
	default:
		n := int64(1 + rng.IntN(3))
		l, code = ratekit.InFlight(n).Lease(h), fmt.Sprintf("ratekit.InFlight(%d).Lease(time.Hour)", n)
	}
	if !l.Spec().Concurrent && rng.IntN(4) == 0 {
		l, code = l.Block(h), code+".Block(time.Hour)"
	}
	return dlimit{l.Named(name), code + fmt.Sprintf(".Named(%q)", name)}
}

// countDecisions compares what two decisions say of counts: Allowed,
// Remaining, Unsatisfiable and Blocked of every limit; whether the call
// was admitted, with which Remaining, and with a receipt of what cost and
// holdings.
func countDecisions(set []dlimit, a, b ratekit.Decision) []string {
	var out []string
	out = differ(out, "Allowed", a.Allowed, b.Allowed)
	if a.Allowed && b.Allowed {
		out = differ(out, "Remaining", a.Remaining, b.Remaining)
	}
	out = differ(out, "Receipt != nil", a.Receipt != nil, b.Receipt != nil)
	sa, sb := statesOf(a), statesOf(b)
	if len(sa) != len(sb) || len(sa) != len(set) {
		return append(out, fmt.Sprintf("states: mem %d, redis %d, limits %d", len(sa), len(sb), len(set)))
	}
	for i := range sa {
		f := fmt.Sprintf("States[%d] (%s).", i, set[i].l.Name())
		out = differ(out, f+"Limit", sa[i].Limit.Spec().ID, sb[i].Limit.Spec().ID)
		out = differ(out, f+"Allowed", sa[i].Allowed, sb[i].Allowed)
		out = differ(out, f+"Remaining", sa[i].Remaining, sb[i].Remaining)
		out = differ(out, f+"Unsatisfiable", sa[i].Unsatisfiable, sb[i].Unsatisfiable)
		out = differ(out, f+"Blocked", sa[i].Blocked, sb[i].Blocked)
	}
	if a.Receipt != nil && b.Receipt != nil && !(a.Receipt.Lease == "" && b.Receipt.Lease != "") {
		out = append(out, countReceipts(set, a.Receipt, b.Receipt)...)
	}
	return out
}

// countReceipts compares two receipts' costs, leases (one or none) and
// what each limit holds.
func countReceipts(set []dlimit, a, b *ratekit.Receipt) []string {
	var out []string
	out = differ(out, "Receipt.Cost", a.Cost, b.Cost)
	out = differ(out, "Receipt.Lease != \"\"", a.Lease != "", b.Lease != "")
	for i := range set {
		if i < len(a.Held) && i < len(b.Held) {
			out = differ(out, fmt.Sprintf("Receipt[%d].Held", i), a.Held[i], b.Held[i])
		}
	}
	return out
}
