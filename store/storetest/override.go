package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/internal/algo"
)

// RunOverrides runs the cases of overrides (ratekit.Limiter.Override) on a
// store that holds them (a store.Overrider), through Limiters built on it;
// newHarness returns a fresh harness for each case, as for Run. With
// Harness.Twin the cases about two instances build the second Limiter on
// the store it returns. Counts are exact on both clocks (windows of an
// hour); the cases that time an override's end or a window's end to the
// microsecond run only on a fake clock (Exact), and on the real clock a
// case with short windows checks that the numbers in force apply once a
// window has ended.
//
// The figures follow package carry's rule (carry.Used): a window keeps its
// count and its end, a sliding window its buckets, a log its entries, and a
// bucket (GCRA, token, leaky) the used part of its burst, read at each
// decision as the intervals of the stored state still to drain, at most
// the new burst, counted in the new interval: a quota raised from 100 to
// 200 after 100 requests admits exactly 100 more; one cut from 100 to 50
// after 70 admits none until the window has ended (a log's entries have
// left it, a sliding window's estimate has fallen below 50, a bucket's used
// part has drained to 49 of its stored intervals).
func RunOverrides(t *testing.T, newHarness func(t *testing.T) Harness) {
	fake := newHarness(t).Exact
	perAlgorithm := []struct {
		name  string
		exact bool
		f     func(t *testing.T, h Harness, l ratekit.Limit)
	}{
		{"Raise", false, overrideRaise},
		{"Cut", false, overrideCut},
		{"TwoInstances", false, overrideTwoInstances},
		{"Expiry", true, overrideExpiry},
		{"ExpiryShort", false, overrideExpiryShort},
		{"CarryReset", false, overrideCarryReset},
		{"Settle", false, overrideSettle},
	}
	for _, c := range perAlgorithm {
		if c.exact && !fake {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			for _, l := range overridable(100, time.Hour) {
				t.Run(l.Name(), func(t *testing.T) { c.f(t, newHarness(t), l) })
			}
		})
	}
	t.Run("CutThenWindowEnds", func(t *testing.T) {
		for _, l := range overridable(10, 400*time.Millisecond) {
			if l.Spec().Algorithm == algo.Calendar {
				continue // a day: its end is timed on the fake clock (Cut)
			}
			t.Run(l.Name(), func(t *testing.T) { overrideCutShort(t, newHarness(t), l) })
		}
	})
	t.Run("CutBurstOnly", func(t *testing.T) {
		for _, l := range overridable(100, time.Hour) {
			if l.Spec().Interval > 0 {
				t.Run(l.Name(), func(t *testing.T) { overrideCutBurst(t, newHarness(t), l) })
			}
		}
	})
	t.Run("QueueCut", func(t *testing.T) { overrideQueueCut(t, newHarness(t)) })
	t.Run("InFlight", func(t *testing.T) { overrideInFlight(t, newHarness(t)) })
	t.Run("ClearAndList", func(t *testing.T) { overrideClearAndList(t, newHarness(t)) })
	t.Run("Invalid", func(t *testing.T) { overrideInvalid(t, newHarness(t)) })
	t.Run("SubjectLength", func(t *testing.T) { overrideSubjectLength(t, newHarness(t)) })
	t.Run("MultiLimit", func(t *testing.T) { overrideMultiLimit(t, newHarness(t)) })
	t.Run("OverrideEqualToOwnClears", func(t *testing.T) { overrideEqualClears(t, newHarness(t)) })
	t.Run("OtherSubjectsUntouched", func(t *testing.T) { overrideOtherSubjects(t, newHarness(t)) })
}

// overridable returns one limit of each built-in algorithm that counts
// requests over time, with quota (or burst, capacity) q over window w
// (Algorithms), and a Calendar day in UTC.
func overridable(q int64, w time.Duration) []ratekit.Limit {
	return append(Algorithms(q, w), ratekit.Calendar(q, calendar.Day, time.UTC))
}

// renumbered returns l with quota (burst, capacity) q and, for a bucket,
// rate r per its period: the same name, algorithm, shape, block and carry
// rule, as an override gives it.
func renumbered(l ratekit.Limit, q int64, r float64) ratekit.Limit {
	sp := l.Spec()
	var n ratekit.Limit
	switch sp.Algorithm {
	case algo.FixedWindow:
		n = ratekit.FixedWindow(q, sp.Window)
	case algo.SlidingWindow:
		n = ratekit.SlidingWindow(q, sp.Window).Precision(sp.Precision)
	case algo.SlidingLog:
		n = ratekit.SlidingLog(q, sp.Window)
	case algo.GCRA:
		n = ratekit.GCRA(r, sp.Window, q)
	case algo.TokenBucket:
		n = ratekit.TokenBucket(r, sp.Window, q)
	case algo.LeakyBucket:
		n = ratekit.LeakyBucket(q, r, sp.Window)
		if sp.MaxWait > 0 {
			n = n.Queue(sp.MaxWait)
		}
	case algo.Calendar:
		n = ratekit.Calendar(q, sp.Period, sp.Location)
	case algo.InFlight:
		n = ratekit.InFlight(q).Lease(sp.Window)
	default:
		panic("storetest: no override for " + l.String())
	}
	if sp.Block > 0 {
		n = n.Block(sp.Block)
	}
	return n.Named(sp.Name).Carry(sp.Carry)
}

// scaled returns l with quota and rate q: for a bucket whose rate is its
// burst (Algorithms), both scaled alike, so its interval changes too.
func scaled(l ratekit.Limit, q int64) ratekit.Limit { return renumbered(l, q, float64(q)) }

// newLimiter builds a Limiter of limits on s.
func newLimiter(t *testing.T, s ratekit.Store, limits ...ratekit.Limit) *ratekit.Limiter {
	t.Helper()
	l, err := ratekit.New(s, limits...)
	if err != nil {
		t.Fatalf("New(%v): %v", limits, err)
	}
	return l
}

// twin returns h's second store on the same data: Twin's, or Store.
func twin(h Harness) ratekit.Store {
	if h.Twin != nil {
		return h.Twin()
	}
	return h.Store
}

// allowN calls AllowN and fails the test on an error.
func allowN(t *testing.T, lim *ratekit.Limiter, key string, cost int64) ratekit.Decision {
	t.Helper()
	d, err := lim.AllowN(context.Background(), key, cost)
	if err != nil {
		t.Fatalf("AllowN(%q, %d): %v", key, cost, err)
	}
	return d
}

// admit takes n requests of cost 1, each of which must pass, and returns
// the last decision.
func admit(t *testing.T, lim *ratekit.Limiter, key string, n int64, what string) ratekit.Decision {
	t.Helper()
	var d ratekit.Decision
	for i := range n {
		if d = allowN(t, lim, key, 1); !d.Allowed {
			t.Fatalf("%s: request %d of %d denied: %+v", what, i+1, n, d)
		}
	}
	return d
}

// admitted takes requests of cost 1 until one is denied, at most limit
// of them, and returns how many passed and the denial.
func admitted(t *testing.T, lim *ratekit.Limiter, key string, limit int64) (int64, ratekit.Decision) {
	t.Helper()
	for n := int64(0); n <= limit; n++ {
		if d := allowN(t, lim, key, 1); !d.Allowed {
			return n, d
		}
	}
	t.Fatalf("more than %d requests admitted", limit)
	return 0, ratekit.Decision{}
}

// override sets subject's override of lim's limit named like l, failing
// the test on an error.
func override(t *testing.T, lim *ratekit.Limiter, subject string, l ratekit.Limit, expiry time.Duration) {
	t.Helper()
	if err := lim.Override(context.Background(), subject, l, expiry); err != nil {
		t.Fatalf("Override(%q, %v, %v): %v", subject, l, expiry, err)
	}
}

// inForce checks that d's binding limit is l's limit with quota q.
func inForce(t *testing.T, d ratekit.Decision, l ratekit.Limit, q int64, what string) {
	t.Helper()
	if d.Limit.Name() != l.Name() || d.Limit.Spec().Algorithm != l.Spec().Algorithm || d.Limit.Spec().Quota != q {
		t.Fatalf("%s: the decision's limit is %v, want %s with quota %d in force", what, d.Limit, l.Name(), q)
	}
}

// listed returns lim's overrides of subject ("" for every subject), as
// "subject name quota until|timed" lines.
func listed(t *testing.T, lim *ratekit.Limiter, subject string) []string {
	t.Helper()
	os, err := lim.Overrides(context.Background(), subject)
	if err != nil {
		t.Fatalf("Overrides(%q): %v", subject, err)
	}
	out := []string{}
	for _, o := range os {
		ends := "until-cleared"
		if !o.Expires.IsZero() {
			ends = "timed"
		}
		out = append(out, fmt.Sprintf("%s %s %d %s", o.Subject, o.Limit.Name(), o.Limit.Spec().Quota, ends))
	}
	return out
}

func wantListed(t *testing.T, lim *ratekit.Limiter, subject string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := listed(t, lim, subject); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Overrides(%q):\n%s\nwant:\n%s", subject, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// overrideRaise: q used, the quota raised to 2q: exactly q more pass, under
// the override's numbers.
func overrideRaise(t *testing.T, h Harness, l ratekit.Limit) {
	q := l.Spec().Quota
	lim := newLimiter(t, h.Store, l)
	admit(t, lim, "k", q, "the own quota")
	if d := allowN(t, lim, "k", 1); d.Allowed {
		t.Fatalf("past the own quota: %+v", d)
	}
	override(t, lim, "k", scaled(l, 2*q), 0)
	for i := range q {
		d := allowN(t, lim, "k", 1)
		if !d.Allowed || d.Remaining != q-1-i {
			t.Fatalf("raised to %d after %d: request %d: allowed %v, remaining %d; want allowed, %d left", 2*q, q, i+1, d.Allowed, d.Remaining, q-1-i)
		}
		inForce(t, d, l, 2*q, "raised")
	}
	d := allowN(t, lim, "k", 1)
	if d.Allowed || d.Remaining != 0 {
		t.Fatalf("raised to %d after %d, %d more: %+v; want a denial", 2*q, q, q, d)
	}
	inForce(t, d, l, 2*q, "raised, denied")
	if r := allowN(t, lim, "other", 1); r.Remaining != q-1 {
		t.Fatalf("another subject: %d left; want %d (the own quota)", r.Remaining, q-1)
	}
}

// cutRetry returns, for the limit l of quota q cut to c after used
// requests all made at once (d is the last one's decision), the wait the
// rule of carry.Used gives until one request passes; and how many pass
// then before a denial.
func cutRetry(l ratekit.Limit, used, c int64, d ratekit.Decision) (time.Duration, int64) {
	sp := l.Spec()
	switch sp.Algorithm {
	case algo.FixedWindow, algo.Calendar:
		return d.ResetAfter, c // the window ends: a fresh one of c
	case algo.SlidingLog:
		return sp.Window, c // the entries leave together
	case algo.SlidingWindow:
		// the used requests sit in one bucket; once it is the oldest, the
		// window start x into it, it counts used × (width − x) / width:
		// one more passes when that is at most c − 1, at
		// x = width − floor((c−1) × width / used) (ms), which is
		// ResetAfter − floor((c−1) × width / used) from now
		width := sp.Precision.Milliseconds()
		return d.ResetAfter - time.Duration((c-1)*width/used)*time.Millisecond, 1
	default:
		// a bucket: the used units, in the cut limit's interval and at most
		// its burst when the rate changes (carry.Used), drain to c − 1 (the
		// cut burst less the request)
		in := scaled(l, c).Spec().Interval
		if in != sp.Interval {
			used = min(used, c)
		}
		return time.Duration(used-(c-1)) * in, 1
	}
}

// overrideCut: 70% of q used, the quota cut to q/2: none passes until the
// rule of carry.Used says (cutRetry), to the millisecond on a fake clock;
// then the override's numbers apply.
func overrideCut(t *testing.T, h Harness, l ratekit.Limit) {
	q := l.Spec().Quota
	used, c := q*7/10, q/2
	lim := newLimiter(t, h.Store, l)
	last := admit(t, lim, "k", used, "the own quota")
	cut := scaled(l, c)
	override(t, lim, "k", cut, 0)
	want, then := cutRetry(l, used, c, last)
	for range 3 {
		d := allowN(t, lim, "k", 1)
		if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 {
			t.Fatalf("cut to %d after %d: %+v; want a denial", c, used, d)
		}
		inForce(t, d, l, c, "cut")
		if h.Exact && d.RetryAfter != want {
			t.Fatalf("cut to %d after %d: Retry-After %v, want %v", c, used, d.RetryAfter, want)
		}
		if d.RetryAfter > want {
			t.Fatalf("cut to %d after %d: Retry-After %v, want at most %v", c, used, d.RetryAfter, want)
		}
	}
	if !h.Exact {
		return
	}
	h.Advance(want - time.Millisecond)
	if d := allowN(t, lim, "k", 1); d.Allowed {
		t.Fatalf("cut: 1 ms before the Retry-After (%v): %+v; want a denial", want, d)
	}
	h.Advance(time.Millisecond)
	if n, d := admitted(t, lim, "k", q); n != then {
		t.Fatalf("cut: at the Retry-After (%v) %d passed before %+v; want %d", want, n, d, then)
	}
	h.Advance(48 * time.Hour) // every count has ended
	n, d := admitted(t, lim, "k", q)
	if n != c {
		t.Fatalf("cut, two days on: %d passed before %+v; want %d (the override's quota)", n, d, c)
	}
	inForce(t, d, l, c, "cut, two days on")
}

// overrideCutShort is overrideCut with short windows, on either clock: the
// denial's Retry-After is honest, and once every count has ended the
// override's quota applies, exactly.
func overrideCutShort(t *testing.T, h Harness, l ratekit.Limit) {
	q, w := l.Spec().Quota, l.Spec().Window
	used, c := q*7/10, q/2
	lim := newLimiter(t, h.Store, l)
	admit(t, lim, "k", used, "the own quota")
	override(t, lim, "k", scaled(l, c), 0)
	d := allowN(t, lim, "k", 1)
	if longest := w + l.Spec().Precision; d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > longest {
		t.Fatalf("cut to %d after %d: %+v; want a denial with Retry-After in (0, %v]", c, used, d, longest)
	}
	wait := d.RetryAfter
	if !h.Exact {
		wait += time.Millisecond
	}
	h.Advance(wait)
	if d := allowN(t, lim, "k", 1); !d.Allowed {
		t.Fatalf("cut to %d after %d: denied after the Retry-After: %+v", c, used, d)
	}
	h.Advance(3 * w)
	if n, d := admitted(t, lim, "k", q); n != c {
		t.Fatalf("cut to %d, after the window: %d passed before %+v; want %d", c, n, d, c)
	}
}

// overrideCutBurst: a bucket's burst cut from q to q/2, its rate kept (the
// interval is the stored one): none passes until the used part has drained
// to q/2 − 1, then one at a time at the rate.
func overrideCutBurst(t *testing.T, h Harness, l ratekit.Limit) {
	q, sp := l.Spec().Quota, l.Spec()
	used, c := q*7/10, q/2
	lim := newLimiter(t, h.Store, l)
	admit(t, lim, "k", used, "the own burst")
	override(t, lim, "k", renumbered(l, c, sp.Rate), 0)
	want := time.Duration(used-(c-1)) * sp.Interval
	d := allowN(t, lim, "k", 1)
	if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > want || h.Exact && d.RetryAfter != want {
		t.Fatalf("burst cut to %d after %d: %+v; want a denial for %v", c, used, d, want)
	}
	inForce(t, d, l, c, "burst cut")
	if !h.Exact {
		return
	}
	h.Advance(want - time.Microsecond)
	if d := allowN(t, lim, "k", 1); d.Allowed {
		t.Fatalf("burst cut: 1 µs before %v: %+v; want a denial", want, d)
	}
	h.Advance(time.Microsecond)
	if n, d := admitted(t, lim, "k", q); n != 1 || d.RetryAfter != sp.Interval {
		t.Fatalf("burst cut: at %v, %d passed before %+v; want 1, then a wait of one interval (%v)", want, n, d, sp.Interval)
	}
}

// overrideQueueCut: a LeakyBucket in queue mode (100 per hour, waits up to
// an hour) with 70 used, then a leak of 200 per hour and waits up to 10
// minutes: the 70 used units are counted in the new 18 s intervals (1260
// s); the burst has room, but the queue's wait is too long until it is 600
// s, at 660 s; then the next waits one new interval.
func overrideQueueCut(t *testing.T, h Harness) {
	l := ratekit.LeakyBucket(100, 100, time.Hour).Queue(time.Hour).Named("queue")
	lim := newLimiter(t, h.Store, l)
	admit(t, lim, "k", 70, "the own numbers")
	override(t, lim, "k", ratekit.LeakyBucket(100, 200, time.Hour).Queue(10*time.Minute).Named("queue"), 0)
	want := 660 * time.Second
	d := allowN(t, lim, "k", 1)
	if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > want || h.Exact && d.RetryAfter != want {
		t.Fatalf("a queue of 70 × 36 s cut to waits of 10 minutes at 18 s: %+v; want a denial for %v", d, want)
	}
	inForce(t, d, l, 100, "queue cut")
	if !h.Exact {
		return
	}
	h.Advance(want - time.Microsecond)
	if d := allowN(t, lim, "k", 1); d.Allowed {
		t.Fatalf("queue cut: 1 µs before %v: %+v; want a denial", want, d)
	}
	h.Advance(time.Microsecond)
	d = allowN(t, lim, "k", 1)
	if !d.Allowed || d.Delay != 10*time.Minute {
		t.Fatalf("queue cut: at %v: %+v; want allowed with a delay of 10 minutes", want, d)
	}
	if d := allowN(t, lim, "k", 1); d.Allowed || d.RetryAfter != 18*time.Second {
		t.Fatalf("queue cut: the next one: %+v; want a denial for one interval (18 s)", d)
	}
}

// overrideTwoInstances: two Limiters built apart on the store (or on two
// store values of one server): an override set through one governs the
// other's very next decision, and so does its clearing.
func overrideTwoInstances(t *testing.T, h Harness, l ratekit.Limit) {
	q := l.Spec().Quota
	a, b := newLimiter(t, h.Store, l), newLimiter(t, twin(h), l)
	admit(t, b, "k", q, "B, the own quota")
	if d := allowN(t, b, "k", 1); d.Allowed {
		t.Fatalf("B past the own quota: %+v", d)
	}
	override(t, a, "k", scaled(l, 2*q), 0)
	d := allowN(t, b, "k", 1)
	if !d.Allowed || d.Remaining != q-1 {
		t.Fatalf("B's next decision after A raised the quota to %d: %+v; want allowed, %d left", 2*q, d, q-1)
	}
	inForce(t, d, l, 2*q, "B after A's override")
	wantListed(t, b, "", fmt.Sprintf("k %s %d until-cleared", l.Name(), 2*q))
	if err := a.ClearOverride(context.Background(), "k", l.Name()); err != nil {
		t.Fatal(err)
	}
	d = allowN(t, b, "k", 1)
	if d.Allowed {
		t.Fatalf("B's next decision after A cleared the override: %+v; want a denial (the own quota, %d, used)", d, q)
	}
	inForce(t, d, l, q, "B after A's clearing")
	wantListed(t, b, "")
}

// overrideExpiry: an override of 2q for 10 s, after q used, ends exactly
// at 10 s: at 10 s − 1 µs its quota still applies, at 10 s the own one,
// with the counts carried (the own quota is used up).
func overrideExpiry(t *testing.T, h Harness, l ratekit.Limit) {
	q := l.Spec().Quota
	lim := newLimiter(t, h.Store, l)
	admit(t, lim, "k", q, "the own quota")
	override(t, lim, "k", scaled(l, 2*q), 10*time.Second)
	wantListed(t, lim, "k", fmt.Sprintf("k %s %d timed", l.Name(), 2*q))
	admit(t, lim, "k", q/2, "the override")
	h.Advance(10*time.Second - time.Microsecond)
	d := allowN(t, lim, "k", 1)
	if !d.Allowed {
		t.Fatalf("1 µs before the override's end: %+v; want allowed", d)
	}
	inForce(t, d, l, 2*q, "1 µs before the end")
	wantListed(t, lim, "", fmt.Sprintf("k %s %d timed", l.Name(), 2*q))
	h.Advance(time.Microsecond)
	d = allowN(t, lim, "k", 1)
	if d.Allowed {
		t.Fatalf("at the override's end: %+v; want a denial (the own quota, %d used up)", d, q)
	}
	inForce(t, d, l, q, "at the end")
	wantListed(t, lim, "")
	wantListed(t, lim, "k")
}

// overrideExpiryShort: an override of 2q for 300 ms, after q used, on
// either clock: within it its quota applies; 350 ms on, the own one, with
// the counts carried, and nothing is listed. Under carry.Reset the end
// starts fresh counts.
func overrideExpiryShort(t *testing.T, h Harness, l ratekit.Limit) {
	q := l.Spec().Quota
	lim := newLimiter(t, h.Store, l)
	admit(t, lim, "k", q, "the own quota")
	override(t, lim, "k", scaled(l, 2*q), 300*time.Millisecond)
	admit(t, lim, "k", q/2, "the override")
	h.Advance(350 * time.Millisecond)
	d := allowN(t, lim, "k", 1)
	if d.Allowed {
		t.Fatalf("after the override's end: %+v; want a denial (the own quota, %d used up)", d, q)
	}
	inForce(t, d, l, q, "after the end")
	wantListed(t, lim, "")

	r := l.Carry(carry.Reset)
	lim = newLimiter(t, h.Store, r)
	admit(t, lim, "r", q, "carry.Reset, the own quota")
	override(t, lim, "r", scaled(r, 2*q), 300*time.Millisecond)
	admit(t, lim, "r", q/2, "carry.Reset, the override")
	h.Advance(350 * time.Millisecond)
	d = allowN(t, lim, "r", 1)
	if !d.Allowed || d.Remaining != q-1 {
		t.Fatalf("carry.Reset after the override's end: %+v; want fresh counts, %d left", d, q-1)
	}
	inForce(t, d, r, q, "carry.Reset after the end")
}

// overrideCarryReset: under carry.Reset an override set, cleared or ended
// starts fresh counts.
func overrideCarryReset(t *testing.T, h Harness, l ratekit.Limit) {
	l = l.Carry(carry.Reset)
	q := l.Spec().Quota
	lim := newLimiter(t, h.Store, l)
	admit(t, lim, "k", q*7/10, "the own quota")
	override(t, lim, "k", scaled(l, 2*q), 0)
	d := allowN(t, lim, "k", 1)
	if !d.Allowed || d.Remaining != 2*q-1 {
		t.Fatalf("carry.Reset: the first request under an override of %d: %+v; want fresh counts, %d left", 2*q, d, 2*q-1)
	}
	inForce(t, d, l, 2*q, "carry.Reset, overridden")
	admit(t, lim, "k", 9, "the override")
	if err := lim.ClearOverride(context.Background(), "k", l.Name()); err != nil {
		t.Fatal(err)
	}
	d = allowN(t, lim, "k", 1)
	if !d.Allowed || d.Remaining != q-1 {
		t.Fatalf("carry.Reset: the first request once cleared: %+v; want fresh counts, %d left", d, q-1)
	}
	inForce(t, d, l, q, "carry.Reset, cleared")
	// the same numbers again: fresh again, not the 10 of the first time
	override(t, lim, "k", scaled(l, 2*q), 0)
	if d := allowN(t, lim, "k", 1); !d.Allowed || d.Remaining != 2*q-1 {
		t.Fatalf("carry.Reset: the same override again: %+v; want fresh counts, %d left", d, 2*q-1)
	}
	if err := lim.ClearOverride(context.Background(), "k", ""); err != nil {
		t.Fatal(err)
	}
	admit(t, lim, "k", 1, "cleared again")
	if !h.Exact {
		return
	}
	override(t, lim, "k", scaled(l, 2*q), 10*time.Second)
	admit(t, lim, "k", 5, "a timed override")
	h.Advance(10 * time.Second)
	d = allowN(t, lim, "k", 1)
	if !d.Allowed || d.Remaining != q-1 {
		t.Fatalf("carry.Reset: the first request after the override ended: %+v; want fresh counts, %d left", d, q-1)
	}
	inForce(t, d, l, q, "carry.Reset, ended")
}

// overrideSettle: a reservation under an override of 2q settles into the
// overridden limit: reserved 150, settled to 30, 170 left; once the
// override is cleared, a settle to 10 leaves 90 of the own 100.
func overrideSettle(t *testing.T, h Harness, l ratekit.Limit) {
	if !Settles(h.Store, l) {
		return
	}
	q := l.Spec().Quota
	lim := newLimiter(t, h.Store, l)
	override(t, lim, "k", scaled(l, 2*q), 0)
	r, err := lim.Reserve(context.Background(), "k", q*3/2)
	if err != nil || !r.Decision.Allowed || r.Decision.Remaining != q/2 {
		t.Fatalf("Reserve(%d) under an override of %d: %+v, %v; want allowed, %d left", q*3/2, 2*q, r, err, q/2)
	}
	inForce(t, r.Decision, l, 2*q, "reserved")
	if err := r.Settle(context.Background(), q*3/10); err != nil {
		t.Fatal(err)
	}
	p, err := lim.Peek(context.Background(), "k")
	if err != nil || p.Remaining != 2*q-q*3/10 {
		t.Fatalf("reserved %d, settled to %d under an override of %d: %+v, %v; want %d left", q*3/2, q*3/10, 2*q, p, err, 2*q-q*3/10)
	}
	if err := lim.ClearOverride(context.Background(), "k", ""); err != nil {
		t.Fatal(err)
	}
	r, err = lim.Reserve(context.Background(), "k", q/2)
	if err != nil || !r.Decision.Allowed {
		t.Fatalf("Reserve(%d) under the own %d with %d used: %+v, %v; want allowed", q/2, q, q*3/10, r, err)
	}
	if err := r.Settle(context.Background(), q/10); err != nil {
		t.Fatal(err)
	}
	p, err = lim.Peek(context.Background(), "k")
	if want := q - q*3/10 - q/10; err != nil || p.Remaining != want {
		t.Fatalf("reserved %d, settled to %d under the own quota: %+v, %v; want %d left", q/2, q/10, p, err, want)
	}
	inForce(t, p, l, q, "cleared")
}

// overrideInFlight: an InFlight limit of 100 slots. 70 held, cut to 50:
// no slot until 21 are released, then one; raised to 200 with 100 held by
// one Limiter, a second one holds 100 more, and a third is refused by the
// store. Each Limiter holds at most its own n of a subject's slots (it
// counts its requests in flight and refuses past n without asking the
// store), so the raise is shared out over instances.
func overrideInFlight(t *testing.T, h Harness) {
	l := ratekit.InFlight(100).Named("conc")
	if !Settles(h.Store, l) {
		return
	}
	ctx := context.Background()
	a, b, c := newLimiter(t, h.Store, l), newLimiter(t, twin(h), l), newLimiter(t, h.Store, l)
	var all []*ratekit.Reservation
	t.Cleanup(func() {
		for _, r := range all {
			_ = r.Release(ctx)
		}
	})
	hold := func(lim *ratekit.Limiter, key string, n int, what string) []*ratekit.Reservation {
		t.Helper()
		var held []*ratekit.Reservation
		for i := range n {
			r, err := lim.Reserve(ctx, key, 1)
			if err != nil || !r.Decision.Allowed {
				t.Fatalf("%s: slot %d of %d: %+v, %v; want a slot", what, i+1, n, r, err)
			}
			held = append(held, r)
			all = append(all, r)
		}
		return held
	}
	refused := func(lim *ratekit.Limiter, key string, q int64, what string) {
		t.Helper()
		r, err := lim.Reserve(ctx, key, 1)
		if err != nil || r.Decision.Allowed || r.Decision.RetryAfter != algo.RetryInFlight {
			t.Fatalf("%s: %+v, %v; want a refusal (the store's, or in-process under the limit in force), Retry-After %v", what, r, err, algo.RetryInFlight)
		}
		inForce(t, r.Decision, l, q, what)
	}
	held := hold(a, "cut", 70, "the own 100")
	override(t, a, "cut", renumbered(l, 50, 50), 0)
	refused(a, "cut", 50, "70 held, cut to 50")
	refused(b, "cut", 50, "70 held, cut to 50, another instance")
	for _, r := range held[:20] {
		if err := r.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	refused(a, "cut", 50, "50 held, cut to 50")
	if err := held[20].Release(ctx); err != nil {
		t.Fatal(err)
	}
	hold(b, "cut", 1, "49 held, cut to 50")
	refused(a, "cut", 50, "50 held again")

	held = hold(a, "raise", 100, "the own 100")
	override(t, a, "raise", renumbered(l, 200, 200), 0) // a's count of its requests learns it at once
	hold(b, "raise", 50, "raised to 200, another instance")
	hold(a, "raise", 50, "raised to 200, the instance that held the own 100")
	refused(c, "raise", 200, "200 held")
	for _, r := range held[:1] {
		if err := r.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	hold(c, "raise", 1, "199 held of 200")
	if err := c.ClearOverride(ctx, "raise", "conc"); err != nil {
		t.Fatal(err)
	}
	refused(c, "raise", 100, "200 held, cleared to 100")
}

// overrideClearAndList: Overrides lists exactly the overrides set, by
// subject and then in the Limiter's order; ClearOverride of one limit, or
// of all (""), puts the own numbers back.
func overrideClearAndList(t *testing.T, h Harness) {
	ctx := context.Background()
	api, burst := ratekit.FixedWindow(100, time.Hour).Named("api"), ratekit.GCRA(10, time.Hour, 10).Named("burst")
	lim := newLimiter(t, h.Store, api, burst)
	wantListed(t, lim, "")
	override(t, lim, "b", renumbered(api, 200, 200), 0)
	override(t, lim, "a", renumbered(burst, 20, 20), time.Hour)
	override(t, lim, "a", renumbered(api, 300, 300), 0)
	override(t, lim, "c", renumbered(api, 400, 400), time.Hour)
	override(t, lim, "c", renumbered(api, 150, 150), 0) // replaces c's
	wantListed(t, lim, "", "a api 300 until-cleared", "a burst 20 timed", "b api 200 until-cleared", "c api 150 until-cleared")
	wantListed(t, lim, "a", "a api 300 until-cleared", "a burst 20 timed")
	wantListed(t, lim, "b", "b api 200 until-cleared")
	wantListed(t, lim, "nobody")
	other := newLimiter(t, h.Store, ratekit.FixedWindow(100, time.Hour).Named("other"))
	wantListed(t, other, "") // another Limiter's limits have none

	d := allowN(t, lim, "a", 1)
	if len(d.States) != 2 || d.States[0].Limit.Spec().Quota != 300 || d.States[1].Limit.Spec().Quota != 20 {
		t.Fatalf("a's decision: %+v; want api 300 and burst 20 in force", d.States)
	}
	if err := lim.ClearOverride(ctx, "a", "api"); err != nil {
		t.Fatal(err)
	}
	wantListed(t, lim, "", "a burst 20 timed", "b api 200 until-cleared", "c api 150 until-cleared")
	d = allowN(t, lim, "a", 1)
	if len(d.States) != 2 || d.States[0].Limit.Spec().Quota != 100 || d.States[0].Remaining != 98 || d.States[1].Limit.Spec().Quota != 20 {
		t.Fatalf("a's decision once api is cleared: %+v; want api's own 100 (98 left), burst 20", d.States)
	}
	if err := lim.ClearOverride(ctx, "b", ""); err != nil {
		t.Fatal(err)
	}
	if err := lim.ClearOverride(ctx, "b", ""); err != nil { // nothing left: nothing happens
		t.Fatal(err)
	}
	if err := lim.ClearOverride(ctx, "nobody", "burst"); err != nil {
		t.Fatal(err)
	}
	wantListed(t, lim, "", "a burst 20 timed", "c api 150 until-cleared")
	if d := allowN(t, lim, "b", 1); d.States[0].Limit.Spec() != api.Spec() || d.States[1].Limit.Spec() != burst.Spec() {
		t.Fatalf("b's decision once cleared: %+v; want the own limits", d.States)
	}
	if err := lim.ClearOverride(ctx, "a", ""); err != nil {
		t.Fatal(err)
	}
	if err := lim.ClearOverride(ctx, "c", "api"); err != nil {
		t.Fatal(err)
	}
	wantListed(t, lim, "")
	err := lim.ClearOverride(ctx, "a", "nope")
	if !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Fatalf("ClearOverride of an unknown name: %v; want ErrInvalidLimit", err)
	}
}

// overrideInvalid: every bad override is an error matching
// ErrInvalidLimit (ErrEmptyKey for an empty subject), and writes nothing.
func overrideInvalid(t *testing.T, h Harness) {
	ctx := context.Background()
	w := time.Hour
	api := ratekit.FixedWindow(100, w).Named("api")
	win := ratekit.SlidingWindow(100, w).Named("win")
	daily := ratekit.Calendar(100, calendar.Day, time.UTC).Named("daily")
	lim := newLimiter(t, h.Store, api, win, daily)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("zone America/New_York: %v (import time/tzdata)", err)
	}
	cases := []struct {
		name    string
		subject string
		limit   ratekit.Limit
		expiry  time.Duration
		want    error
	}{
		{"NegativeQuota", "k", ratekit.FixedWindow(-1, w).Named("api"), 0, ratekit.ErrInvalidLimit},
		{"ZeroQuota", "k", ratekit.FixedWindow(0, w).Named("api"), 0, ratekit.ErrInvalidLimit},
		{"ZeroWindow", "k", ratekit.FixedWindow(200, 0).Named("api"), 0, ratekit.ErrInvalidLimit},
		{"ZeroLimit", "k", ratekit.Limit{}, 0, ratekit.ErrInvalidLimit},
		{"UnknownName", "k", ratekit.FixedWindow(200, w).Named("nope"), 0, ratekit.ErrInvalidLimit},
		{"OtherAlgorithm", "k", ratekit.SlidingLog(200, w).Named("api"), 0, ratekit.ErrInvalidLimit},
		{"OtherPrecision", "k", ratekit.SlidingWindow(200, w).Precision(w).Named("win"), 0, ratekit.ErrInvalidLimit},
		{"OtherPeriod", "k", ratekit.Calendar(200, calendar.Hour, time.UTC).Named("daily"), 0, ratekit.ErrInvalidLimit},
		{"OtherZone", "k", ratekit.Calendar(200, calendar.Day, ny).Named("daily"), 0, ratekit.ErrInvalidLimit},
		{"AddsABlock", "k", ratekit.FixedWindow(200, w).Block(time.Minute).Named("api"), 0, ratekit.ErrInvalidLimit},
		{"Custom", "k", ratekit.Custom("mine", 200, w, [3]int64{1, 2, 3}).Named("api"), 0, ratekit.ErrInvalidLimit},
		{"EmptySubject", "", ratekit.FixedWindow(200, w).Named("api"), 0, ratekit.ErrEmptyKey},
		{"Subject513", strings.Repeat("s", 513), ratekit.FixedWindow(200, w).Named("api"), 0, ratekit.ErrInvalidLimit},
		{"NegativeExpiry", "k", ratekit.FixedWindow(200, w).Named("api"), -time.Second, ratekit.ErrInvalidLimit},
		{"ExpiryBelow1ms", "k", ratekit.FixedWindow(200, w).Named("api"), 999 * time.Microsecond, ratekit.ErrInvalidLimit},
	}
	for _, c := range cases {
		err := lim.Override(ctx, c.subject, c.limit, c.expiry)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Override: %v; want an error matching %v", c.name, err, c.want)
		}
	}
	for _, name := range []string{"", "api", "nope"} {
		if err := lim.ClearOverride(ctx, "", name); !errors.Is(err, ratekit.ErrEmptyKey) {
			t.Errorf("ClearOverride of the empty subject, %q: %v; want ErrEmptyKey", name, err)
		}
	}
	wantListed(t, lim, "")
	wantListed(t, lim, "k")
	d := allowN(t, lim, "k", 1)
	for i, want := range []ratekit.Limit{api, win, daily} {
		if len(d.States) != 3 || d.States[i].Limit.Spec() != want.Spec() || d.States[i].Remaining != 99 {
			t.Fatalf("after the bad overrides: %+v; want the own limits, 99 left of each", d.States)
		}
	}
}

// overrideSubjectLength: a subject of 512 bytes may be overridden and
// listed; the limit applies to it alone.
func overrideSubjectLength(t *testing.T, h Harness) {
	l := ratekit.FixedWindow(2, time.Hour).Named("api")
	lim := newLimiter(t, h.Store, l)
	long := strings.Repeat("s", 512)
	override(t, lim, long, renumbered(l, 3, 3), 0)
	if n, _ := admitted(t, lim, long, 10); n != 3 {
		t.Fatalf("a 512-byte subject raised to 3: %d passed", n)
	}
	if n, _ := admitted(t, lim, long[:511], 10); n != 2 {
		t.Fatalf("its 511-byte prefix: %d passed; want the own 2", n)
	}
	wantListed(t, lim, "", long+" api 3 until-cleared")
	if err := lim.ClearOverride(context.Background(), long, "api"); err != nil {
		t.Fatal(err)
	}
	wantListed(t, lim, "")
}

// overrideMultiLimit: a fixed "api" of 5 and a GCRA "burst" of 10 with a
// block; "api" raised to 20: the calls stay all or nothing, and "burst"
// keeps its numbers and its block.
func overrideMultiLimit(t *testing.T, h Harness) {
	api := ratekit.FixedWindow(5, time.Hour).Named("api")
	burst := ratekit.GCRA(10, time.Hour, 10).Named("burst").Block(time.Hour)
	lim := newLimiter(t, h.Store, api, burst)
	admit(t, lim, "k", 5, "within both")
	d := allowN(t, lim, "k", 1)
	if d.Allowed || d.Limit.Name() != "api" || len(d.States) != 2 || d.States[1].Remaining != 5 || d.Blocked {
		t.Fatalf("past api's 5: %+v; want api to deny, burst untouched (5 left), no block", d)
	}
	override(t, lim, "k", renumbered(api, 20, 20), 0)
	for i := range 5 {
		d := allowN(t, lim, "k", 1)
		if !d.Allowed || d.States[0].Remaining != int64(14-i) || d.States[1].Remaining != int64(4-i) {
			t.Fatalf("api raised to 20, request %d: %+v; want allowed, api %d left, burst %d", i+1, d.States, 14-i, 4-i)
		}
		if d.States[0].Limit.Spec().Quota != 20 || d.States[1].Limit.Spec() != burst.Spec() {
			t.Fatalf("api raised to 20: limits in force %v, %v; want api 20 and burst's own", d.States[0].Limit, d.States[1].Limit)
		}
	}
	for i := range 2 {
		d := allowN(t, lim, "k", 1)
		if d.Allowed || d.Limit.Name() != "burst" || !d.Blocked || d.States[0].Remaining != 10 || d.States[0].Limit.Spec().Quota != 20 {
			t.Fatalf("past burst's 10, call %d: %+v; want burst to deny and block, api untouched (10 left of 20)", i+1, d)
		}
		if d.RetryAfter > time.Hour || d.RetryAfter <= time.Hour-time.Minute || h.Exact && d.RetryAfter != time.Hour {
			t.Fatalf("past burst's 10, call %d: Retry-After %v; want the block's hour", i+1, d.RetryAfter)
		}
	}
	if err := lim.ClearOverride(context.Background(), "k", "api"); err != nil {
		t.Fatal(err)
	}
	if d := allowN(t, lim, "k", 1); d.Allowed || len(d.States) != 2 || !d.States[1].Blocked || d.States[0].Limit.Spec() != api.Spec() {
		t.Fatalf("api cleared, burst blocking: %+v; want burst still blocking, api's own numbers", d)
	}
}

// overrideEqualClears: an override with the limit's own numbers clears
// the override in force.
func overrideEqualClears(t *testing.T, h Harness) {
	l := ratekit.FixedWindow(100, time.Hour).Named("api")
	lim := newLimiter(t, h.Store, l)
	override(t, lim, "k", renumbered(l, 200, 200), 0)
	wantListed(t, lim, "", "k api 200 until-cleared")
	override(t, lim, "k", ratekit.FixedWindow(100, time.Hour).Named("api"), time.Hour)
	wantListed(t, lim, "")
	d := allowN(t, lim, "k", 1)
	if d.Limit.Spec() != l.Spec() || d.Remaining != 99 {
		t.Fatalf("after an override with the own numbers: %+v; want the own limit", d)
	}
}

// overrideOtherSubjects: an override applies to its subject alone, and
// another Limiter with a limit of the same name and algorithm, other
// numbers, sees it too (the override names the limit, not the Limiter).
func overrideOtherSubjects(t *testing.T, h Harness) {
	l := ratekit.FixedWindow(3, time.Hour).Named("api")
	lim := newLimiter(t, h.Store, l)
	override(t, lim, "k", renumbered(l, 5, 5), 0)
	if n, _ := admitted(t, lim, "j", 10); n != 3 {
		t.Fatalf("another subject: %d passed; want the own 3", n)
	}
	redeployed := newLimiter(t, h.Store, ratekit.FixedWindow(4, time.Hour).Named("api"))
	if n, d := admitted(t, redeployed, "k", 10); n != 5 || d.Limit.Spec().Quota != 5 {
		t.Fatalf("a Limiter with api of 4: %d passed, %v; want the override's 5", n, d.Limit)
	}
}
