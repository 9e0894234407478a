package denycache_test

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
)

// TestLiftsAtRetryAfter: for every algorithm and a block, a cached denial is
// answered in-process up to 1 ms before its Retry-After, with the store's
// numbers less the time elapsed, and at Retry-After the store is asked and
// admits.
func TestLiftsAtRetryAfter(t *testing.T) {
	for _, l := range []ratekit.Limit{
		ratekit.FixedWindow(3, time.Minute),
		ratekit.SlidingWindow(3, time.Minute),
		ratekit.SlidingWindow(3, time.Minute).Precision(time.Second).Named("sliding1s"),
		ratekit.SlidingLog(3, time.Minute),
		ratekit.GCRA(3, time.Minute, 3),
		ratekit.TokenBucket(3, time.Minute, 3),
		ratekit.LeakyBucket(3, 3, time.Minute),
		ratekit.LeakyBucket(3, 3, time.Minute).Queue(10 * time.Second).Named("leakyq"),
		ratekit.FixedWindow(3, time.Minute).Block(5 * time.Minute).Named("block"),
	} {
		t.Run(l.Name(), func(t *testing.T) {
			f := newFixture(t)
			d := f.deny(t, "k", l)
			if d.RetryAfter < 2*time.Millisecond {
				t.Fatalf("Retry-After %v too short for the test", d.RetryAfter)
			}
			if blocked := l.Spec().Block > 0; d.Blocked != blocked {
				t.Fatalf("Blocked = %v, want %v", d.Blocked, blocked)
			}
			first := f.cached(t, "k", 1, l)
			if first.RetryAfter != d.RetryAfter || first.Remaining != d.Remaining || first.Limit != l || first.Blocked != d.Blocked {
				t.Fatalf("cached answer %+v differs from the store's %+v", first, d)
			}
			f.clock.Advance(d.RetryAfter - time.Millisecond)
			c := f.cached(t, "k", 1, l)
			if c.RetryAfter != time.Millisecond || c.ResetAfter != max(d.ResetAfter-d.RetryAfter+time.Millisecond, 0) ||
				len(c.States) != 0 || c.Remaining != d.Remaining {
				t.Fatalf("1 ms before Retry-After: %+v, want Retry-After 1ms (store said %+v)", c, d)
			}
			f.clock.Advance(time.Millisecond)
			if a := f.asked(t, "k", 1, l); !a.Allowed {
				t.Fatalf("at Retry-After the store denied: %+v", a)
			}
		})
	}
}

// TestDefaultMargin: by default the cache stops answering 1 ms before
// Retry-After, for stores that read their clock in whole milliseconds.
func TestDefaultMargin(t *testing.T) {
	f := newFixture(t, denycache.WithMargin(denycache.DefaultMargin))
	l := ratekit.FixedWindow(1, time.Minute)
	d := f.deny(t, "k", l)
	f.clock.Advance(d.RetryAfter - time.Millisecond - time.Microsecond)
	f.cached(t, "k", 1, l)
	f.clock.Advance(time.Microsecond)
	if a := f.asked(t, "k", 1, l); a.Allowed || a.RetryAfter != time.Millisecond {
		t.Fatalf("1 ms before Retry-After the store said %+v, want a denial for 1ms more", a)
	}
}

// TestCosts: a denial answers its cost and larger ones up to the smallest
// quota; a smaller cost goes to the store unless the denial is a block; a
// cost above the quota (unsatisfiable) always goes to the store.
func TestCosts(t *testing.T) {
	f := newFixture(t)
	l := ratekit.FixedWindow(5, time.Minute)
	f.take(t, "k", 3, l) // 2 left
	if d := f.asked(t, "k", 3, l); d.Allowed {
		t.Fatalf("cost 3 with 2 left admitted: %+v", d)
	}
	f.cached(t, "k", 3, l)
	f.cached(t, "k", 5, l)
	if d := f.asked(t, "k", 6, l); !d.Unsatisfiable {
		t.Fatalf("cost 6 over a quota of 5: %+v, want the store's unsatisfiable", d)
	}
	if d := f.asked(t, "k", 2, l); !d.Allowed {
		t.Fatalf("cost 2 with 2 left: %+v", d)
	}

	b := ratekit.FixedWindow(5, time.Minute).Block(time.Hour).Named("blocked")
	f.take(t, "b", 3, b)
	if d := f.asked(t, "b", 3, b); d.Allowed || !d.Blocked || d.RetryAfter != time.Hour {
		t.Fatalf("want a block of 1h: %+v", d)
	}
	if d := f.cached(t, "b", 1, b); !d.Blocked || d.RetryAfter != time.Hour {
		t.Fatalf("a smaller cost during a block: %+v", d)
	}
}
