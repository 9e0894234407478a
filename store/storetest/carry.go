package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/internal/algo"
)

// The carry cases: a limit's state is identified by its name and algorithm
// (and shape), so new numbers under the same name keep what was used
// (carry.Used, the default) or start fresh (carry.Reset). Each case charges
// a subject under the old numbers, then decides under the new ones, as a
// Limiter rebuilt or updated with them would.
//
// On a fake clock the windows are a minute and the figures exact, to the
// microsecond; on the real clock the windows are 1 s, the counts as exact
// and the times bounded. Bucket limits (GCRA, token, leaky) get a unit back
// every 600 ms on a fake clock and every 36 s on the real one, so that none
// comes back between a real clock's calls.

// carryTimes returns the window of the carry cases on h and the time that
// passes between the charges under the old numbers and the new: a minute and
// 12 s on a fake clock (the figures below assume them), 1 s and 200 ms on the
// real clock, which leaves a case's few hundred calls 700 ms before a
// window's first requests start to leave. A step is two buckets of a
// sliding window (window/10 each).
func carryTimes(h Harness) (window, step time.Duration) {
	if h.Exact {
		return time.Minute, 12 * time.Second
	}
	return time.Second, 200 * time.Millisecond
}

// bucketPeriod returns the period of the bucket limits' rate on h: with a
// rate of 100 per period, a unit comes back every 600 ms on a fake clock and
// every 36 s on the real one.
func bucketPeriod(h Harness) time.Duration {
	if h.Exact {
		return time.Minute
	}
	return time.Hour
}

// slack is the real clock's allowance for a wait to be over, beyond the
// time a store reported.
const slack = 50 * time.Millisecond

// A windowed is a limit over windows whose numbers change in the carry
// cases, and its figures on a fake clock (window 1 min, step 12 s).
type windowed struct {
	name  string
	limit func(quota int64, window time.Duration) ratekit.Limit
	// aligned: the cases start at a window boundary of the clock, where
	// the limit's periods (calendar) or buckets (sliding) start.
	aligned bool
	// raised is the Retry-After once 100 taken under quota 100 and, a step
	// later, 100 more under quota 200 fill the raised quota (also the
	// Retry-After of the old numbers' 100 alone at that time), raisedLeft
	// what quota 200 then has left.
	raised     time.Duration
	raisedLeft int64
	// cut is the Retry-After once 70 taken under quota 100 meet, a step
	// later, quota 50; clear is the time from the cut's denial until the 70
	// have all left.
	cut, clear time.Duration
	// partial: at the Retry-After of requests made at one time, part of
	// them still counts, leaving room for one request; else none does, and
	// the whole quota is left.
	partial bool
}

// left is what a peek under quota has left at the Retry-After of requests
// that were all made at one time.
func (c windowed) left(quota int64) int64 {
	if c.partial {
		return 1
	}
	return quota
}

// windowedLimits are the window limits of the carry cases, each named
// "plan" (another name than the limits some harnesses lease).
//
//   - fixed: the window ends a minute after its first request: 48 s after
//     the step, whatever the new quota; then the whole quota is left.
//   - calendar (calendar.Every(window)): the period ends 48 s after the step.
//   - log: the oldest entries leave 48 s after the step; under quota 200
//     the 100 taken at the step still count then.
//   - sliding (buckets of 6 s): 200 at t0 and the step, with quota 200,
//     leave room for one when 1/100 of t0's bucket has left the window, 60
//     ms into it: 48.06 s; 70 under quota 50 leave room for one when 21/70
//     of it has, 1.8 s into it: 49.8 s, and leave it wholly 6 s into it:
//     54 s. At either Retry-After the estimate leaves room for one request.
var windowedLimits = []windowed{
	{"fixed", func(q int64, w time.Duration) ratekit.Limit { return ratekit.FixedWindow(q, w).Named("plan") },
		false, 48 * time.Second, 200, 48 * time.Second, 48 * time.Second, false},
	{"calendar", func(q int64, w time.Duration) ratekit.Limit {
		return ratekit.Calendar(q, calendar.Every(w), nil).Named("plan")
	}, true, 48 * time.Second, 200, 48 * time.Second, 48 * time.Second, false},
	{"log", func(q int64, w time.Duration) ratekit.Limit { return ratekit.SlidingLog(q, w).Named("plan") },
		false, 48 * time.Second, 100, 48 * time.Second, 48 * time.Second, false},
	{"sliding", func(q int64, w time.Duration) ratekit.Limit { return ratekit.SlidingWindow(q, w).Named("plan") },
		true, 48060 * time.Millisecond, 1, 49800 * time.Millisecond, 54 * time.Second, true},
}

// A bucketed is a bucket limit (GCRA's arithmetic) whose numbers change in
// the carry cases: a rate per period and a burst (a capacity).
type bucketed struct {
	name  string
	limit func(rate float64, per time.Duration, burst int64) ratekit.Limit
}

// bucketedLimits are the bucket limits of the carry cases, named "plan".
var bucketedLimits = []bucketed{
	{"gcra", func(r float64, p time.Duration, b int64) ratekit.Limit { return ratekit.GCRA(r, p, b).Named("plan") }},
	{"token", func(r float64, p time.Duration, b int64) ratekit.Limit {
		return ratekit.TokenBucket(r, p, b).Named("plan")
	}},
	{"leaky", func(r float64, p time.Duration, b int64) ratekit.Limit {
		return ratekit.LeakyBucket(b, r, p).Named("plan")
	}},
}

// runCarry runs the carry cases.
func runCarry(t *testing.T, newHarness func(t *testing.T) Harness) {
	for _, c := range windowedLimits {
		t.Run("QuotaRaised/"+c.name, func(t *testing.T) { windowRaised(t, newHarness(t), c) })
		t.Run("QuotaCut/"+c.name, func(t *testing.T) { windowCut(t, newHarness(t), c) })
		t.Run("Reset/"+c.name, func(t *testing.T) { windowReset(t, newHarness(t), c) })
	}
	t.Run("WindowLength/longer", func(t *testing.T) { windowLength(t, newHarness(t), 10) })
	t.Run("WindowLength/shorter", func(t *testing.T) { windowLength(t, newHarness(t), -10) })
	t.Run("NewShapeStartsFresh/sliding", func(t *testing.T) {
		newShape(t, newHarness(t), func(w time.Duration) (ratekit.Limit, ratekit.Limit) {
			l := ratekit.SlidingWindow(100, w).Named("plan")
			return l, l.Precision(w) // one bucket per window instead of ten
		})
	})
	t.Run("NewShapeStartsFresh/calendar", func(t *testing.T) {
		newShape(t, newHarness(t), func(w time.Duration) (ratekit.Limit, ratekit.Limit) {
			return ratekit.Calendar(100, calendar.Every(w), nil).Named("plan"),
				ratekit.Calendar(100, calendar.Every(2*w), nil).Named("plan")
		})
	})
	for _, c := range bucketedLimits {
		t.Run("BurstRaised/"+c.name, func(t *testing.T) { burstRaised(t, newHarness(t), c) })
		t.Run("BurstCut/"+c.name, func(t *testing.T) { burstCut(t, newHarness(t), c) })
		t.Run("RateChanged/"+c.name, func(t *testing.T) { rateChanged(t, newHarness(t), c) })
		t.Run("Reset/"+c.name, func(t *testing.T) { bucketReset(t, newHarness(t), c) })
	}
	if Settles(newHarness(t).Store, ratekit.InFlight(1)) {
		t.Run("SlotsCut", func(t *testing.T) { slotsCut(t, newHarness(t)) })
		t.Run("SlotsRaised", func(t *testing.T) { slotsRaised(t, newHarness(t)) })
		t.Run("Reset/inflight", func(t *testing.T) { slotsReset(t, newHarness(t)) })
	}
}

// startWindow moves h's clock to the start of a window of
// calendar.Every(w) (which is a sliding window's bucket boundary too): a
// probe charged under its own key and limit reads the time to it, to the
// millisecond, rounded up.
func startWindow(t *testing.T, h Harness, w time.Duration) {
	t.Helper()
	probe := ratekit.Calendar(1, calendar.Every(w), nil).Named("probe")
	d := take(t, h, "probe", 1, probe)
	if !d.Allowed || d.ResetAfter <= 0 || d.ResetAfter > w {
		t.Fatalf("the boundary probe: %+v; want an admission with its period's end within %v", d, w)
	}
	h.Advance(d.ResetAfter)
}

// admits takes cost 1 for key under l until l denies, at most its quota
// and one more times, and returns how many it admitted and the denial.
func admits(t *testing.T, h Harness, key string, l ratekit.Limit) (int64, ratekit.Decision) {
	t.Helper()
	for n := range l.Spec().Quota + 1 {
		if d := take(t, h, key, 1, l); !d.Allowed {
			return n, d
		}
	}
	t.Fatalf("%s admitted %d, past its quota", l, l.Spec().Quota+1)
	return 0, ratekit.Decision{}
}

// takeN takes cost 1 n times for key under l, each of which must pass.
func takeN(t *testing.T, h Harness, key string, n int64, l ratekit.Limit) {
	t.Helper()
	for i := range n {
		if d := take(t, h, key, 1, l); !d.Allowed {
			t.Fatalf("request %d of %d under %s: %+v, want an admission", i+1, n, l, d)
		}
	}
}

// retryAt checks that a denial's Retry-After is want on a fake clock (and
// that a take 1 ms before it is denied and a peek at it passes, leaving
// left), or within (0, most] on the real clock.
func retryAt(t *testing.T, h Harness, key string, l ratekit.Limit, d ratekit.Decision, want, most time.Duration, left int64) {
	t.Helper()
	if !h.Exact {
		if d.RetryAfter <= 0 || d.RetryAfter > most {
			t.Fatalf("denial %+v: Retry-After %v, want within (0, %v]", d, d.RetryAfter, most)
		}
		return
	}
	if d.RetryAfter != want {
		t.Fatalf("denial %+v: Retry-After %v, want %v", d, d.RetryAfter, want)
	}
	h.Advance(want - time.Millisecond)
	if e := take(t, h, key, 1, l); e.Allowed {
		t.Fatalf("1 ms before the Retry-After (%v): %+v, want a denial", want, e)
	}
	h.Advance(time.Millisecond)
	if p := peek(t, h, key, l); !p.Allowed || p.Remaining != left {
		t.Fatalf("at the Retry-After (%v): %+v, want an admission, %d left", want, p, left)
	}
}

// windowRaised: 100 used of 100, a step later the quota is 200: exactly
// 100 more pass in the window, then a denial waits for the old window (or
// its entries, its buckets) to end.
func windowRaised(t *testing.T, h Harness, c windowed) {
	w, step := carryTimes(h)
	old, raised := c.limit(100, w), c.limit(200, w)
	if c.aligned {
		startWindow(t, h, w)
	}
	fill(t, h, "k", old)
	h.Advance(step)
	n, d := admits(t, h, "k", raised)
	if n != 100 || d.Remaining != 0 {
		t.Fatalf("quota 100 → 200 after 100 used: %d more admitted, denial %+v; want exactly 100, none left", n, d)
	}
	retryAt(t, h, "k", raised, d, c.raised, w, c.raisedLeft)
}

// windowCut: 70 used of 100, a step later the quota is 50: none passes
// until the 70 have left the window, then 50 do.
func windowCut(t *testing.T, h Harness, c windowed) {
	w, step := carryTimes(h)
	old, cut := c.limit(100, w), c.limit(50, w)
	if c.aligned {
		startWindow(t, h, w)
	}
	takeN(t, h, "k", 70, old)
	h.Advance(step)
	d := take(t, h, "k", 1, cut)
	if d.Allowed || d.Remaining != 0 || d.Unsatisfiable {
		t.Fatalf("quota 100 → 50 after 70 used: %+v, want a denial, none left", d)
	}
	retryAt(t, h, "k", cut, d, c.cut, w, c.left(50))
	if h.Exact {
		h.Advance(c.clear - c.cut)
	} else {
		h.Advance(d.RetryAfter + cut.Spec().Precision + slack)
	}
	if n, d := admits(t, h, "k", cut); n != 50 {
		t.Fatalf("once the 70 have left: %d admitted (then %+v), want exactly 50", n, d)
	}
}

// windowReset: under carry.Reset the numbers are part of the identity: 100
// used of 100, then quota 200 admits 200, and 70 used of 100, then quota
// 50 admits 50; the old numbers still find their own counts.
func windowReset(t *testing.T, h Harness, c windowed) {
	w, step := carryTimes(h)
	limit := func(q int64) ratekit.Limit { return c.limit(q, w).Carry(carry.Reset) }
	if c.aligned {
		startWindow(t, h, w)
	}
	fill(t, h, "raised", limit(100))
	takeN(t, h, "cut", 70, limit(100))
	h.Advance(step)
	if n, d := admits(t, h, "raised", limit(200)); n != 200 {
		t.Fatalf("carry.Reset, quota 100 → 200 after 100 used: %d admitted (then %+v), want 200", n, d)
	}
	if n, d := admits(t, h, "cut", limit(50)); n != 50 {
		t.Fatalf("carry.Reset, quota 100 → 50 after 70 used: %d admitted (then %+v), want 50", n, d)
	}
	if n, d := admits(t, h, "cut", limit(100)); n != 30 {
		t.Fatalf("carry.Reset, back to quota 100 after 70 used: %d admitted (then %+v), want 30", n, d)
	}
	d := take(t, h, "raised", 1, limit(100))
	if d.Allowed {
		t.Fatalf("carry.Reset, back to quota 100 after 100 used: %+v, want a denial", d)
	}
	retryAt(t, h, "raised", limit(100), d, c.raised, w, c.left(100))
}

// windowLength: a fixed window of a minute, 30 used, a step (12 s) later
// runs over factor times the window (a tenth for a negative factor): the
// current window keeps its end (48 s on) and its count (70 more pass),
// and the next window has the new length.
func windowLength(t *testing.T, h Harness, factor int) {
	w, step := carryTimes(h)
	next := w * time.Duration(factor)
	if factor < 0 {
		next = w / time.Duration(-factor)
	}
	old, changed := ratekit.FixedWindow(100, w).Named("plan"), ratekit.FixedWindow(100, next).Named("plan")
	takeN(t, h, "k", 30, old)
	h.Advance(step)
	d := take(t, h, "k", 1, changed)
	end := w - step
	if !d.Allowed || d.Remaining != 69 || (h.Exact && d.ResetAfter != end) || d.ResetAfter <= 0 || d.ResetAfter > end {
		t.Fatalf("window %v → %v after 30 used: %+v; want an admission, 69 left, the window ending in %v", w, next, d, end)
	}
	n, d := admits(t, h, "k", changed)
	if n != 69 || (h.Exact && d.RetryAfter != end) || d.RetryAfter <= 0 || d.RetryAfter > end {
		t.Fatalf("window %v → %v: %d more admitted, denial %+v; want 69, Retry-After %v (the old window's end)", w, next, n, d, end)
	}
	if h.Exact {
		h.Advance(d.RetryAfter)
	} else {
		h.Advance(d.RetryAfter + slack)
	}
	d = take(t, h, "k", 1, changed)
	if !d.Allowed || d.Remaining != 99 || (h.Exact && d.ResetAfter != next) || d.ResetAfter <= next-slack || d.ResetAfter > next {
		t.Fatalf("the next window: %+v; want an admission, 99 left, the window %v long", d, next)
	}
}

// newShape: a limit whose shape changes (a sliding window's bucket width, a
// calendar's period) starts fresh state: 100 used of 100, then 100 pass
// under the new shape.
func newShape(t *testing.T, h Harness, limits func(w time.Duration) (ratekit.Limit, ratekit.Limit)) {
	w, _ := carryTimes(h)
	old, shaped := limits(w)
	startWindow(t, h, w)
	fill(t, h, "k", old)
	if n, d := admits(t, h, "k", shaped); n != 100 {
		t.Fatalf("%s → %s after 100 used: %d admitted (then %+v), want 100: a new shape, fresh state", old, shaped, n, d)
	}
}

// burstRaised: rate 100 per minute (a unit every 600 ms), burst 100, all
// used; the burst raised to 200 admits exactly 100 more at once, then a
// denial waits one unit, 600 ms.
func burstRaised(t *testing.T, h Harness, c bucketed) {
	per := bucketPeriod(h)
	unit := per / 100
	old, raised := c.limit(100, per, 100), c.limit(100, per, 200)
	fill(t, h, "k", old)
	n, d := admits(t, h, "k", raised)
	if n != 100 || d.Remaining != 0 {
		t.Fatalf("burst 100 → 200 after 100 used: %d more admitted, denial %+v; want exactly 100, none left", n, d)
	}
	retryAt(t, h, "k", raised, d, unit, unit, 1)
}

// burstCut: rate 100 per minute, 70 used of a burst of 100 (the TAT 42 s
// ahead); the burst cut to 50 (30 s) admits nothing until 21 units have
// drained, 12.6 s on, when one passes, and 50 once all 70 have (42 s).
func burstCut(t *testing.T, h Harness, c bucketed) {
	per := bucketPeriod(h)
	unit := per / 100
	old, cut := c.limit(100, per, 100), c.limit(100, per, 50)
	takeN(t, h, "k", 70, old)
	d := take(t, h, "k", 1, cut)
	if d.Allowed || d.Remaining != 0 || d.Unsatisfiable {
		t.Fatalf("burst 100 → 50 after 70 used: %+v, want a denial, none left", d)
	}
	retryAt(t, h, "k", cut, d, 21*unit, 21*unit, 1)
	if !h.Exact {
		return // the real clock's units are too long to wait for
	}
	h.Advance(70*unit - 21*unit)
	n, d := admits(t, h, "k", cut)
	if n != 50 || d.RetryAfter != unit {
		t.Fatalf("once the 70 have drained: %d admitted, then %+v; want exactly 50, then Retry-After %v", n, d, unit)
	}
}

// rateChanged: rate 100 per minute (600 ms a unit), burst 100. 60 used
// (TAT 36 s ahead) under the rate doubled (300 ms a unit) stand as 60
// units used of 100 (18 s ahead): exactly 40 more pass at once, then a
// denial waits one new unit, 300 ms; all 100 have drained 30 s later. All
// 100 used under the doubled rate and a burst of 50 stand as 50, the new
// burst: nothing passes, and a denial waits one new unit.
func rateChanged(t *testing.T, h Harness, c bucketed) {
	// Retry-After holds exactly after a change of rate: the TAT is written
	// back in the new interval on the first read, then drains at its pace.
	per := bucketPeriod(h)
	unit := per / 200 // the new rate's
	old, doubled := c.limit(100, per, 100), c.limit(200, per, 100)
	takeN(t, h, "k", 60, old)
	n, d := admits(t, h, "k", doubled)
	if n != 40 || d.Remaining != 0 {
		t.Fatalf("rate 100 → 200 per %v after 60 used of 100: %d more admitted, denial %+v; want exactly 40", per, n, d)
	}
	retryAt(t, h, "k", doubled, d, unit, unit, 1) // the used part drains at the new pace
	if h.Exact {
		h.Advance(100 * unit)
		if n, d := admits(t, h, "k", doubled); n != 100 {
			t.Fatalf("the doubled rate's 100 units later: %d admitted (then %+v), want 100", n, d)
		}
	}
	clamped := c.limit(200, per, 50)
	fill(t, h, "full", old)
	d = take(t, h, "full", 1, clamped)
	if d.Allowed || d.Remaining != 0 {
		t.Fatalf("rate 100 → 200 per %v and burst 100 → 50 after 100 used: %+v; want a denial, none left", per, d)
	}
	retryAt(t, h, "full", clamped, d, unit, unit, 1)
	// a rate halved after 100 used of 100: the 100 drain at the new pace,
	// one unit first
	halved := c.limit(50, per, 100)
	fill(t, h, "halved", old)
	d = take(t, h, "halved", 1, halved)
	if d.Allowed || d.Remaining != 0 {
		t.Fatalf("rate 100 → 50 per %v after 100 used: %+v; want a denial, none left", per, d)
	}
	retryAt(t, h, "halved", halved, d, 4*unit, 4*unit, 1)
}

// bucketReset: under carry.Reset new numbers start fresh: 100 used of a
// burst of 100, then a burst of 200 admits 200; 70 used, then a burst of
// 50 admits 50; the old numbers still find their own state.
func bucketReset(t *testing.T, h Harness, c bucketed) {
	per := bucketPeriod(h)
	limit := func(burst int64) ratekit.Limit { return c.limit(100, per, burst).Carry(carry.Reset) }
	fill(t, h, "raised", limit(100))
	takeN(t, h, "cut", 70, limit(100))
	if n, d := admits(t, h, "raised", limit(200)); n != 200 {
		t.Fatalf("carry.Reset, burst 100 → 200 after 100 used: %d admitted (then %+v), want 200", n, d)
	}
	if n, d := admits(t, h, "cut", limit(50)); n != 50 {
		t.Fatalf("carry.Reset, burst 100 → 50 after 70 used: %d admitted (then %+v), want 50", n, d)
	}
	if d := take(t, h, "raised", 1, limit(100)); d.Allowed {
		t.Fatalf("carry.Reset, back to burst 100 after 100 used: %+v, want a denial", d)
	}
	if n, d := admits(t, h, "cut", limit(100)); n != 30 {
		t.Fatalf("carry.Reset, back to burst 100 after 70 used: %d admitted (then %+v), want 30", n, d)
	}
}

// reserveSlot reserves one slot of l for key and reports the decision.
func reserveSlot(t *testing.T, h Harness, key string, l ratekit.Limit) ratekit.Decision {
	t.Helper()
	d, err := Reserve(context.Background(), h.Store, key, []ratekit.Limit{l}, 1)
	if err != nil {
		t.Fatalf("Reserve(%q) under %s: %v", key, l, err)
	}
	return d
}

// holdSlots reserves n slots of l for key, each of which must pass, and
// returns their receipts.
func holdSlots(t *testing.T, h Harness, key string, n int64, l ratekit.Limit) []*ratekit.Receipt {
	t.Helper()
	var held []*ratekit.Receipt
	for i := range n {
		d := reserveSlot(t, h, key, l)
		if !d.Allowed || d.Receipt == nil || d.Remaining != l.Spec().Quota-1-i {
			t.Fatalf("slot %d of %s: %+v, want an admission with a receipt, %d left", i+1, l, d, l.Spec().Quota-1-i)
		}
		held = append(held, d.Receipt)
	}
	return held
}

// slotDenied checks that l refuses key a slot, with none left.
func slotDenied(t *testing.T, h Harness, key string, l ratekit.Limit, what string) {
	t.Helper()
	if d := reserveSlot(t, h, key, l); d.Allowed || d.Remaining != 0 || d.RetryAfter != algo.RetryInFlight {
		t.Fatalf("%s: %+v, want a denial, none left, Retry-After %v", what, d, algo.RetryInFlight)
	}
}

// slotsCut: 5 slots held of 5, the limit cut to 3: no slot until 3 are
// released (2 held), then one.
func slotsCut(t *testing.T, h Harness) {
	old, cut := ratekit.InFlight(5).Named("slots"), ratekit.InFlight(3).Named("slots")
	held := holdSlots(t, h, "k", 5, old)
	slotDenied(t, h, "k", cut, "5 held, the limit cut to 3")
	for i, rc := range held[:2] {
		settle(t, h.Store, "k", rc, 1, old)
		slotDenied(t, h, "k", cut, []string{"4 held of 3", "3 held of 3"}[i])
	}
	settle(t, h.Store, "k", held[2], 1, old)
	if d := reserveSlot(t, h, "k", cut); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("2 held of 3: %+v, want an admission, none left", d)
	}
	slotDenied(t, h, "k", cut, "3 held of 3 again")
}

// slotsRaised: 3 slots held of 3, the limit raised to 5: exactly 2 more.
func slotsRaised(t *testing.T, h Harness) {
	old, raised := ratekit.InFlight(3).Named("slots"), ratekit.InFlight(5).Named("slots")
	holdSlots(t, h, "k", 3, old)
	slotDenied(t, h, "k", old, "3 held of 3")
	for i := range 2 {
		if d := reserveSlot(t, h, "k", raised); !d.Allowed || d.Remaining != int64(1-i) {
			t.Fatalf("slot %d after the limit was raised to 5: %+v, want an admission, %d left", 4+i, d, 1-i)
		}
	}
	slotDenied(t, h, "k", raised, "5 held of 5")
}

// slotsReset: under carry.Reset 5 slots held of 5, then a limit of 3 holds
// 3 slots of its own; the old limit still holds its 5.
func slotsReset(t *testing.T, h Harness) {
	old, cut := ratekit.InFlight(5).Named("slots").Carry(carry.Reset), ratekit.InFlight(3).Named("slots").Carry(carry.Reset)
	holdSlots(t, h, "k", 5, old)
	holdSlots(t, h, "k", 3, cut)
	slotDenied(t, h, "k", cut, "carry.Reset: 3 held of the new 3")
	slotDenied(t, h, "k", old, "carry.Reset: 5 held of the old 5")
}
