package storetest

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/internal/algo"
)

func countsDown(t *testing.T, h Harness, l ratekit.Limit) {
	for i := range l.Spec().Quota {
		d := take(t, h, "k", 1, l)
		if !d.Allowed || d.Remaining != l.Spec().Quota-1-i || d.Limit.Spec().ID != l.Spec().ID {
			t.Fatalf("take %d: allowed %v remaining %d, want allowed, %d", i, d.Allowed, d.Remaining, l.Spec().Quota-1-i)
		}
	}
	d := take(t, h, "k", 1, l)
	if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 || d.Unsatisfiable {
		t.Fatalf("past the quota: %+v", d)
	}
}

func exactness(t *testing.T, h Harness, l ratekit.Limit) {
	l = withBurst(l, 100)
	allowed := Concurrently(200, func() bool {
		d, err := Take(context.Background(), h.Store, "burst", []ratekit.Limit{l}, 1)
		return err == nil && d.Allowed
	})
	if allowed != 100 {
		t.Fatalf("%d of 200 allowed, want exactly 100", allowed)
	}
}

// Concurrently runs f n times at once, released together, and counts the
// calls that returned true.
func Concurrently(n int, f func() bool) int64 {
	var count atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if f() {
				count.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	return count.Load()
}

// withBurst rebuilds l with quota (or burst, capacity) q, same window.
func withBurst(l ratekit.Limit, q int64) ratekit.Limit {
	if l.Spec().Algorithm == algo.Suppressed {
		return ratekit.Suppressed(q, l.Spec().Window, l.Spec().Factor).Named(l.Name())
	}
	for _, m := range Algorithms(q, l.Spec().Window) {
		if m.Name() == l.Name() {
			return m
		}
	}
	panic("storetest: unknown limit " + l.Name())
}

func unsatisfiable(t *testing.T, h Harness, l ratekit.Limit) {
	d := take(t, h, "k", l.Spec().Quota+1, l)
	if d.Allowed || !d.Unsatisfiable || d.RetryAfter != 0 {
		t.Fatalf("cost above capacity: %+v, want denied, unsatisfiable, no retry", d)
	}
	if p := peek(t, h, "k", l); p.Remaining != l.Spec().Quota {
		t.Fatalf("after an unsatisfiable request remaining %d, want %d", p.Remaining, l.Spec().Quota)
	}
}

func peekAndCostZero(t *testing.T, h Harness, l ratekit.Limit) {
	take(t, h, "k", 2, l)
	for range 3 {
		if p := peek(t, h, "k", l); !p.Allowed || p.Remaining != l.Spec().Quota-2 {
			t.Fatalf("peek: %+v", p)
		}
		if d := take(t, h, "k", 0, l); !d.Allowed || d.Remaining != l.Spec().Quota-2 {
			t.Fatalf("cost 0: %+v", d)
		}
	}
}

func allOrNothing(t *testing.T, h Harness, l ratekit.Limit) {
	loose := ratekit.FixedWindow(1000, time.Hour).Named("loose")
	if l.Name() == "fixed" {
		loose = ratekit.SlidingLog(1000, time.Hour).Named("loose")
	}
	fill(t, h, "k", l)
	for range 3 {
		d := take(t, h, "k", 1, loose, l)
		if d.Allowed || d.Limit.Spec().ID != l.Spec().ID || d.States[0].Remaining != 1000 {
			t.Fatalf("denied by %s: %+v; the loose limit must be untouched", l.Name(), d)
		}
	}
	if p := peek(t, h, "k", loose); p.Remaining != 1000 {
		t.Fatalf("loose limit remaining %d after denials, want 1000", p.Remaining)
	}
}

func reset(t *testing.T, h Harness, l ratekit.Limit) {
	l = l.Block(time.Hour)
	fill(t, h, "k", l)
	if err := Reset(context.Background(), h.Store, "k", []ratekit.Limit{l}); err != nil {
		t.Fatal(err)
	}
	if d := take(t, h, "k", 1, l); !d.Allowed || d.Remaining != l.Spec().Quota-1 {
		t.Fatalf("after Reset: %+v", d)
	}
}

// newParameters: under carry.Reset new numbers start fresh state; by
// default (carry.Used) a burst one larger admits exactly one more.
func newParameters(t *testing.T, h Harness, l ratekit.Limit) {
	r := l.Carry(carry.Reset)
	fill(t, h, "r", r)
	if d := take(t, h, "r", 1, withBurst(r, r.Spec().Quota+1)); !d.Allowed || d.Remaining != r.Spec().Quota {
		t.Fatalf("carry.Reset: new numbers under the same name: %+v, want fresh state", d)
	}
	if l.Spec().Algorithm == "suppressed" { // its admissions past the soft limit are drawn
		return
	}
	fill(t, h, "k", l)
	bigger := withBurst(l, l.Spec().Quota+1)
	if d := take(t, h, "k", 1, bigger); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("carry.Used: a burst one larger: %+v, want one more admitted, none remaining", d)
	}
	if d := take(t, h, "k", 1, bigger); d.Allowed {
		t.Fatalf("carry.Used: a burst one larger admitted two more: %+v", d)
	}
}

// refills uses a short window so that it also runs on the real clock.
func refills(t *testing.T, h Harness, l ratekit.Limit) {
	l = withWindow(withBurst(l, 2), 200*time.Millisecond)
	d := fill(t, h, "k", l)
	// a sliding window spreads a bucket's requests over the bucket: its
	// last request may leave one bucket width after the window
	if longest := 200*time.Millisecond + l.Spec().Precision; d.RetryAfter <= 0 || d.RetryAfter > longest {
		t.Fatalf("retry after %v, want (0, %v]", d.RetryAfter, longest)
	}
	h.Advance(d.RetryAfter + time.Millisecond)
	if d := take(t, h, "k", 1, l); !d.Allowed {
		t.Fatalf("denied after waiting the retry: %+v", d)
	}
}

func retryAfterExact(t *testing.T, h Harness, l ratekit.Limit) {
	h.Advance(500 * time.Millisecond) // start between window and bucket edges
	take(t, h, "k", 1, l)
	h.Advance(7 * time.Minute)
	d := fill2(t, h, "k", l)
	for i := range 3 {
		if d.RetryAfter <= time.Millisecond {
			t.Fatalf("round %d: retry %v too short to test", i, d.RetryAfter)
		}
		h.Advance(d.RetryAfter - time.Millisecond)
		if e := take(t, h, "k", 1, l); e.Allowed {
			t.Fatalf("round %d: allowed 1 ms before the retry (%v)", i, d.RetryAfter)
		}
		h.Advance(time.Millisecond)
		if e := take(t, h, "k", 1, l); !e.Allowed {
			t.Fatalf("round %d: denied at exactly the retry (%v): %+v", i, d.RetryAfter, e)
		}
		if d = take(t, h, "k", 1, l); d.Allowed {
			// more room opened than one request: use it up
			d = fill2(t, h, "k", l)
		}
	}
}

// fill2 takes until denied, without expecting a full quota.
func fill2(t *testing.T, h Harness, key string, l ratekit.Limit) ratekit.Decision {
	t.Helper()
	for range l.Spec().Quota + 1 {
		if d := take(t, h, key, 1, l); !d.Allowed {
			return d
		}
	}
	t.Fatal("never denied")
	return ratekit.Decision{}
}

func blockOutlastsWindow(t *testing.T, h Harness, l ratekit.Limit) {
	short := withWindow(l, time.Second).Block(5 * time.Second)
	d := fill(t, h, "k", short)
	if !d.Blocked || d.RetryAfter != 5*time.Second {
		t.Fatalf("denial with a block: %+v, want blocked for 5s", d)
	}
	h.Advance(2 * time.Second) // the window has drained
	if d := take(t, h, "k", 1, short); d.Allowed || !d.Blocked || d.RetryAfter != 3*time.Second {
		t.Fatalf("2s into the block: %+v, want still blocked for 3s", d)
	}
	h.Advance(3*time.Second - time.Millisecond)
	if d := take(t, h, "k", 1, short); d.Allowed {
		t.Fatalf("1 ms before the block ends: allowed")
	}
	h.Advance(time.Millisecond)
	if d := take(t, h, "k", 1, short); !d.Allowed || d.Remaining != short.Spec().Quota-1 {
		t.Fatalf("at the block's end: %+v, want allowed with nothing recorded during the block", d)
	}
}

// blockShorterThanCounters: a block that ends before the limit's own
// counters would admit answers with the counters' wait, at its start and
// while it lasts (a request at the block's end would be denied, and start
// the block again): a request at the Retry-After passes, and a peek 1 ms
// before it is denied.
func blockShorterThanCounters(t *testing.T, h Harness, l ratekit.Limit) {
	short := withWindow(l, 6*time.Second).Block(time.Second)
	d := fill(t, h, "k", short)
	if !d.Blocked || d.RetryAfter <= time.Second {
		t.Fatalf("denial with a 1s block: %+v, want blocked, waiting for the counters (over 1s)", d)
	}
	want := d.RetryAfter
	h.Advance(500 * time.Millisecond)
	if d := take(t, h, "k", 1, short); d.Allowed || !d.Blocked || d.RetryAfter != want-500*time.Millisecond {
		t.Fatalf("0.5s into the block: %+v, want blocked with Retry-After %s (the counters')", d, want-500*time.Millisecond)
	}
	h.Advance(want - 500*time.Millisecond - time.Millisecond)
	if p := peek(t, h, "k", short); p.Allowed {
		t.Fatalf("1 ms before the Retry-After (%s): %+v, want denied by the counters", want, p)
	}
	h.Advance(time.Millisecond)
	if d := take(t, h, "k", 1, short); !d.Allowed {
		t.Fatalf("at the Retry-After (%s): %+v, want allowed", want, d)
	}
}

// withWindow rebuilds l over window w, same quota.
func withWindow(l ratekit.Limit, w time.Duration) ratekit.Limit {
	if l.Spec().Algorithm == algo.Suppressed {
		return ratekit.Suppressed(l.Spec().Quota, w, l.Spec().Factor).Named(l.Name())
	}
	for _, m := range Algorithms(l.Spec().Quota, w) {
		if m.Name() == l.Name() {
			return m
		}
	}
	panic("storetest: unknown limit " + l.Name())
}

func queueDelays(t *testing.T, h Harness) {
	l := ratekit.LeakyBucket(10, 10, time.Second).Queue(300 * time.Millisecond) // one leaves every 100 ms
	for i, want := range []time.Duration{0, 100, 200, 300} {
		d := take(t, h, "k", 1, l)
		if !d.Allowed || d.Delay != want*time.Millisecond {
			t.Fatalf("request %d: allowed %v delay %v, want %v", i, d.Allowed, d.Delay, want*time.Millisecond)
		}
	}
	d := take(t, h, "k", 1, l)
	if d.Allowed || d.RetryAfter != 100*time.Millisecond {
		t.Fatalf("past the longest wait: %+v, want denied, retry 100ms", d)
	}
}

// longSubjects: a long subject and a subject equal to its SHA-256 digest
// (which an in-process store may hold long subjects as) count apart, on the
// store and behind a deny cache alike: using up one leaves the other whole.
func longSubjects(t *testing.T, h Harness, l ratekit.Limit) {
	long := strings.Repeat("k", 80)
	sum := sha256.Sum256([]byte(long))
	quota := l.Spec().Quota
	for range quota {
		take(t, h, long, 1, l)
	}
	if d := take(t, h, long, 1, l); d.Allowed {
		t.Fatalf("the long subject past its quota: %+v", d)
	}
	for _, other := range []string{string(sum[:]), long[:64], long + "k"} {
		if d := take(t, h, other, 1, l); !d.Allowed || d.Remaining != quota-1 {
			t.Fatalf("subject %q after the long one was used up: %+v, want allowed with %d left", other, d, quota-1)
		}
	}
}
