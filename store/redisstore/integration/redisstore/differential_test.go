package redisstore_test

import (
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisengine"
	"github.com/ratekit/ratekit/store/redisstore"
)

// The differential test: memstore and the Redis engine's Lua (through
// redisstore, on miniredis driven by redistest.NewRedisClock, which expires
// keys as a real Redis does) must give the same answers to the same random
// sequences of every store.Settler operation, on random sets of every
// algorithm, random costs and clock steps that hit the limits' boundaries.
// A share of the sequences (diffCalendarShare) are calendar sequences
// (differential_calendar_test.go): Calendar limits in seven zones and
// windows aligned to the clock beside the other algorithms, on a clock that
// starts shortly before a DST change, a day's, week's, month's or year's end
// and passes several periods; there memstore's period ends must also meet
// an oracle of the periods, and the Redis engine's calls made for another
// period than Redis's clock are refused (STALE) and sent again. A share of
// the sequences (diffCarryShare) also change their limits' numbers as they
// go, under the same names (differential_carry_test.go): their sets have
// variants with other quotas, bursts, rates, windows, blocks, leases and
// queue waits, or another carry rule, which the steps switch between, and
// receipts are settled and renewed with other numbers than they were made
// with.
//
// RATEKIT_DIFF_SEQUENCES=n runs n sequences (default diffSequences);
// RATEKIT_DIFF_SEED=s runs sequence s alone and logs every step. A failure
// prints the sequence's limits and steps as Go literals: paste them into
// differentialReplays (differential_replay_test.go) to replay them (with
// package carry imported there when a limit says .Carry(carry.Reset)).

const (
	diffSteps     = 10 // steps per sequence, at least
	diffMoreSteps = 40 // and up to this many more
	diffWorkers   = 4  // sequences run on this many miniredis at once
	diffPool      = 8  // live receipts kept per sequence

	diffCalendarShare = 35 // percent of the sequences that are calendar sequences
	diffCalendarSteps = 45 // percent of a calendar sequence's clock steps that are calendar steps (calStep)
)

// diffSequences is the number of sequences (of 30 steps on average) of
// the default run, which takes about 27 s on 2 cores (45 s under the race
// detector): each step runs the engine in miniredis's Lua interpreter,
// which costs about 0.3 ms of CPU, and about 1.7 ms under the race
// detector.
func diffSequences() int {
	if raceDetector {
		return 900
	}
	return 3500
}

var diffStart = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// diffSubjects are the subjects of a sequence: one kept raw in Redis keys,
// one hashed, and one equal to the other's digest.
var diffSubjects = []string{"subject", longSubject, digestSubject}

func TestDifferentialRandom(t *testing.T) {
	n, first := diffSequences(), uint64(1)
	if s := os.Getenv("RATEKIT_DIFF_SEQUENCES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("RATEKIT_DIFF_SEQUENCES=%q: want a positive integer", s)
		}
		n = v
	}
	verbose := false
	if s := os.Getenv("RATEKIT_DIFF_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RATEKIT_DIFF_SEED=%q: want a sequence number", s)
		}
		n, first, verbose = 1, v, true
	}
	if testing.Short() {
		n = min(n, 300)
	}
	var mu sync.Mutex
	steps := 0
	var cal calStats
	var car carryStats
	var ovs overrideStats
	var stale atomic.Int64
	t.Run("workers", func(t *testing.T) {
		for w := range min(diffWorkers, n) {
			t.Run(fmt.Sprint(w), func(t *testing.T) {
				t.Parallel()
				env := newDiffEnv(t)
				defer func() { stale.Add(env.stale.Load()) }()
				for i := w; i < n; i += diffWorkers {
					r := env.sequence(t, first+uint64(i), verbose)
					r.generate(diffSteps + r.rng.IntN(diffMoreSteps+1))
					r.mem.Close()
					mu.Lock()
					steps += len(r.ops)
					cal.add(r.stats)
					car.add(r.carry)
					ovs.add(r.ov.stats)
					mu.Unlock()
					if t.Failed() {
						return
					}
				}
			})
		}
	})
	t.Logf("%d sequences, %d steps; %d calendar sequences; %d steps with a Calendar limit or an aligned window, "+
		"%d clock steps that ended a calendar period, %d that passed a DST change, %d settles after the charged period; "+
		"%d calls refused as STALE and sent again",
		n, steps, cal.sequences, cal.steps, cal.crossed, cal.dst, cal.late, stale.Load())
	t.Logf("changes of numbers: %v", car)
	t.Logf("overrides: %v", ovs)
}

// A diffEnv is a miniredis and a redisstore on it, reused by the
// sequences one worker runs.
type diffEnv struct {
	draw   atomic.Uint64 // the draw of the step (float64 bits): both stores' WithRandom
	stale  atomic.Int64  // calls Redis refused as made for another time (STALE), which the engine sends again
	m      *miniredis.Miniredis
	red    *redisstore.Store
	prefix string
}

func newDiffEnv(t *testing.T) *diffEnv {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	e := &diffEnv{m: m, prefix: "diff"}
	c.AddHook(diffStaleHook{&e.stale})
	e.red = newStore(t, c, e.prefix, redisstore.WithRandom(e.random))
	return e
}

// diffStaleHook counts the replies "STALE <µs>" (see redisengine's restale).
type diffStaleHook struct{ n *atomic.Int64 }

func (diffStaleHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h diffStaleHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil && strings.HasPrefix(err.Error(), "STALE ") {
			h.n.Add(1)
		}
		return err
	}
}

func (diffStaleHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// random returns the step's draw.
func (e *diffEnv) random() float64 {
	return math.Float64frombits(e.draw.Load())
}

// A diffRun is one sequence: its limit sets, both stores on one clock,
// the pool of live receipts and the steps played so far.
type diffRun struct {
	t       *testing.T
	seed    uint64
	rng     *rand.Rand
	env     *diffEnv
	clock   *redistest.Clock
	mem     *memstore.Store
	sets    [][]dlimit
	limits  [][]ratekit.Limit
	pool    []rpair
	ops     []dop
	last    []time.Duration // the spans of the last decision
	verbose bool

	start    time.Time       // the clock's start
	slow     []ratekit.Limit // set 0's Calendar limits and aligned windows of a second or more (see slowLimit)
	shortest time.Duration   // the shortest usual length (Window) of slow
	stats    calStats

	variants                   // the changes of numbers (differential_carry_test.go)
	written  map[string]string // the numbers each Redis key was last written under (numbersOf)
	carry    carryStats

	ov overrides // the overrides (differential_override_test.go)
}

// An rpair is one receipt of each store for one admitted Reserve: receipt
// i of memstore pairs with receipt i of redisstore (their contents differ:
// lease names, window ends read from PTTL in ms).
type rpair struct {
	mem, red *ratekit.Receipt
	sub, set int
}

// sequence starts random sequence seed on a flushed miniredis and a new
// memstore: a calendar sequence (genCalendarSets picks its start), or one
// of limits with milliseconds that starts at diffStart.
func (e *diffEnv) sequence(t *testing.T, seed uint64, verbose bool) *diffRun {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	vrng := rand.New(rand.NewPCG(seed, 0xca44))
	var sets [][]dlimit
	var start time.Time
	if rng.IntN(100) < diffCalendarShare {
		sets, start = genCalendarSets(rng)
	} else {
		sets = genSets(rng)
		// start anywhere in a millisecond: bucket and window boundaries
		// fall at whole milliseconds of Unix time
		start = diffStart.Add(time.Duration(rng.IntN(1000)) * time.Microsecond)
	}
	nbase := len(sets)
	orng := rand.New(rand.NewPCG(seed, 0x0e44))
	on := orng.IntN(100) < diffOverrideShare
	if on {
		sets = withResets(orng, sets)
	}
	sets, nvar := withVariants(vrng, sets, false)
	r := e.startAt(t, start, sets, verbose)
	r.seed, r.rng, r.variants = seed, rng, variants{vrng: vrng, nbase: nbase, nvar: nvar}
	r.ov.orng, r.ov.on = orng, on
	if on {
		r.ov.stats.sequences = 1
	}
	if nvar > 0 {
		r.carry.sequences = 1
	}
	return r
}

// startAt starts a sequence with limit sets sets at start.
func (e *diffEnv) startAt(t *testing.T, start time.Time, sets [][]dlimit, verbose bool) *diffRun {
	e.m.FlushAll()
	clock := redistest.NewRedisClock(start, e.m)
	r := &diffRun{t: t, env: e, clock: clock, sets: sets,
		mem:     memstore.New(memstore.WithClock(clock.Now), memstore.WithRandom(e.random)),
		verbose: verbose, start: start, variants: variants{nbase: len(sets)}, written: map[string]string{},
		carry: carryStats{changed: map[string]int{}, metBy: map[string]int{}},
		ov:    overrides{active: map[okey]oactive{}, stats: overrideStats{inForce: map[string]int{}}}}
	for _, d := range sets[0] {
		if slowLimit(d) {
			if len(r.slow) == 0 || d.l.Spec().Window < r.shortest {
				r.shortest = d.l.Spec().Window
			}
			r.slow = append(r.slow, d.l)
		}
	}
	if len(r.slow) > 0 {
		r.stats.sequences = 1
	}
	for _, s := range sets {
		ls := limitsOf(s)
		if _, err := ratekit.New(r.mem, ls...); err != nil {
			t.Fatalf("invalid limits: %v\n%s", err, setsCode(sets))
		}
		r.limits = append(r.limits, ls)
	}
	if verbose {
		t.Logf("start %s (%s), limits:\n%s", start.Format(time.RFC3339Nano), timeCode(start), setsCode(sets))
	}
	return r
}

// generate plays n random steps.
// In a sequence with overrides, diffOverrideSteps percent of them are
// preceded by an override step (nextOverride), from another random stream:
// the other steps are the ones the sequence had without.
func (r *diffRun) generate(n int) {
	for range n {
		if r.ov.on && r.ov.orng.IntN(100) < diffOverrideSteps && !r.play(r.nextOverride()) {
			return
		}
		if !r.play(r.next()) {
			return
		}
	}
}

// next returns a random step, given the pool as it stands.
func (r *diffRun) next() dop {
	rng := r.rng
	o := dop{sub: rng.IntN(len(diffSubjects)), set: r.pickSet(rng.IntN(r.nbase))}
	o.adv = r.step()
	q := maxQuota(r.sets[o.set])
	if suppressed(r.sets[0]) {
		o.draw = float64(rng.IntN(1000)) / 1000
	}
	switch k := rng.IntN(100); {
	case k < 30:
		o.kind, o.cost = opTake, genCost(rng, q)
	case k < 38:
		o.kind = opPeek
	case k < 41:
		o.kind = opReset
	case k < 64 || len(r.pool) == 0:
		o.kind, o.cost = opReserve, genCost(rng, q)
	default:
		o.rc = rng.IntN(len(r.pool))
		p := r.pool[o.rc]
		o.sub, o.set = p.sub, r.settleSet(p.set)
		switch {
		case k < 82:
			o.kind, o.cost = opSettle, genSettleCost(rng, p.mem.Cost, maxQuota(r.sets[p.set]))
		case k < 91:
			o.kind = opRelease
		default:
			o.kind = opRenew
		}
	}
	return o
}

// step returns a random clock step: in a calendar sequence, diffCalendarSteps
// percent of the time a calendar step (calStep), else one about the other
// limits (genStep on their spans, their variants' and the last decision's
// spans of up to a second); in the other sequences, genStep on all.
func (r *diffRun) step() time.Duration {
	if len(r.slow) == 0 {
		lengths := append(spans(r.sets[0]), r.variantSpans(func(dlimit) bool { return true })...)
		return genStep(r.rng, append(lengths, r.last...))
	}
	if r.rng.IntN(100) < diffCalendarSteps {
		return r.calStep()
	}
	var fast []dlimit
	for _, d := range r.sets[0] {
		if !slowLimit(d) {
			fast = append(fast, d)
		}
	}
	lengths := append(spans(fast), r.variantSpans(func(d dlimit) bool { return !slowLimit(d) })...)
	for _, x := range r.last {
		if x <= time.Second {
			lengths = append(lengths, x)
		}
	}
	return genStep(r.rng, lengths)
}

// play runs one step on both stores and compares their answers. It
// reports whether the sequence may go on (it stops at a mismatch, failing
// the test).
func (r *diffRun) play(o dop) bool {
	r.ops = append(r.ops, o)
	before := r.clock.Now()
	r.clock.Advance(o.adv)
	r.count(o, before)
	r.countCarry(o)
	r.countOverrides(o)
	r.env.draw.Store(math.Float64bits(o.draw))
	ctx := context.Background()
	sub, ls := diffSubjects[o.sub], r.limits[o.set]
	var dm, dr ratekit.Decision
	var em, er error
	var msgs []string
	switch o.kind {
	case opTake:
		dm, em = storetest.Take(ctx, r.mem, sub, ls, o.cost)
		dr, er = storetest.Take(ctx, r.env.red, sub, ls, o.cost)
	case opPeek:
		dm, em = storetest.Peek(ctx, r.mem, sub, ls)
		dr, er = storetest.Peek(ctx, r.env.red, sub, ls)
	case opReset:
		em, er = storetest.Reset(ctx, r.mem, sub, ls), storetest.Reset(ctx, r.env.red, sub, ls)
	case opReserve:
		dm, em = storetest.Reserve(ctx, r.mem, sub, ls, o.cost)
		dr, er = storetest.Reserve(ctx, r.env.red, sub, ls, o.cost)
	case opSettle, opRelease:
		p := r.pool[o.rc]
		cost := o.cost
		if o.kind == opRelease {
			cost = p.mem.Cost
		}
		em, er = storetest.Settle(ctx, r.mem, sub, ls, p.mem, cost), storetest.Settle(ctx, r.env.red, sub, ls, p.red, cost)
		msgs = diffReceipts(r.sets[o.set], p.mem, p.red)
	case opOverride, opClear:
		em, er, msgs = r.playOverride(ctx, o)
	case opRenew:
		p := r.pool[o.rc]
		hm, e1 := storetest.Renew(ctx, r.mem, sub, ls, p.mem)
		hr, e2 := storetest.Renew(ctx, r.env.red, sub, ls, p.red)
		em, er = e1, e2
		if hm != hr {
			msgs = append(msgs, fmt.Sprintf("Renew: mem %v, redis %v", hm, hr))
		}
	}
	if (em == nil) != (er == nil) {
		msgs = append(msgs, fmt.Sprintf("error: mem %v, redis %v", em, er))
	}
	msgs = append(msgs, r.compareLists(ctx, o)...)
	if o.kind == opTake || o.kind == opPeek || o.kind == opReserve {
		msgs = append(msgs, diffDecisions(r.sets[o.set], dm, dr)...)
		if em == nil && er == nil {
			msgs = append(msgs, r.checkInForce(o, dm)...)
		}
		if em == nil {
			msgs = append(msgs, checkPeriods(r.sets[o.set], dm, r.clock.Now())...)
		}
		r.last = decisionSpans(dm)
	}
	if r.verbose {
		r.logStep(o, dm, dr, em, er)
	}
	if len(msgs) > 0 {
		r.fail(msgs, dm, dr, em, er)
		return false
	}
	r.noteWrites(o)
	r.afterReserve(o, dm, dr)
	r.afterSettle(o)
	return true
}

// afterReserve adds the receipts of a Reserve both stores admitted to the
// pool, dropping the oldest past diffPool.
func (r *diffRun) afterReserve(o dop, dm, dr ratekit.Decision) {
	if o.kind != opReserve || dm.Receipt == nil || dr.Receipt == nil {
		return
	}
	r.pool = append(r.pool, rpair{mem: dm.Receipt, red: dr.Receipt, sub: o.sub, set: o.set})
	if len(r.pool) > diffPool {
		r.pool = r.pool[1:]
	}
}

// afterSettle drops a released receipt from the pool; a settled one stays,
// to be settled again.
func (r *diffRun) afterSettle(o dop) {
	if o.kind == opRelease {
		r.pool = append(r.pool[:o.rc], r.pool[o.rc+1:]...)
	}
}

func (r *diffRun) fail(msgs []string, dm, dr ratekit.Decision, em, er error) {
	r.t.Helper()
	var b strings.Builder
	for i, o := range r.ops {
		fmt.Fprintf(&b, "\t\t%v, // #%d\n", o, i)
	}
	r.t.Fatalf("seed %d, step %d %v: memstore and redisstore differ, or memstore's period is not the zone's:\n\t%s\nmem:   %s\nredis: %s\n"+
		"replay: RATEKIT_DIFF_SEED=%d, or this differentialReplays entry:\n{\"seed %d\", %s,\n%s,\n\t[]dop{\n%s\t}},",
		r.seed, len(r.ops)-1, r.ops[len(r.ops)-1], strings.Join(msgs, "\n\t"), fmtDecision(dm, em), fmtDecision(dr, er),
		r.seed, r.seed, timeCode(r.start), setsCode(r.sets), b.String())
}

func sumAdv(ops []dop) time.Duration {
	var d time.Duration
	for _, o := range ops {
		d += o.adv
	}
	return d
}

// key returns the Redis key of limit l's state for subject sub.
func (r *diffRun) key(sub int, l ratekit.Limit) string {
	tag, err := redisengine.Tag(diffSubjects[sub])
	if err != nil {
		r.t.Fatal(err)
	}
	return r.env.prefix + ":{" + tag + "}:" + l.Spec().ID
}

// logStep logs a step and both stores' answers.
func (r *diffRun) logStep(o dop, dm, dr ratekit.Decision, em, er error) {
	a, b := fmtDecision(dm, em), fmtDecision(dr, er)
	switch o.kind {
	case opReset, opOverride, opClear:
		a, b = fmt.Sprint(em), fmt.Sprint(er)
	case opSettle, opRelease, opRenew:
		if o.rc < len(r.pool) {
			a, b = fmtReceipt(r.pool[o.rc].mem)+" "+fmt.Sprint(em), fmtReceipt(r.pool[o.rc].red)+" "+fmt.Sprint(er)
		}
	}
	r.t.Logf("#%d %v at +%v\n\tmem:   %s\n\tredis: %s", len(r.ops)-1, o, sumAdv(r.ops), a, b)
}
