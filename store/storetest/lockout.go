package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekit/ratekit/lockout"
)

// loginLockout: 3 attempts a minute (15 min block), 5 an hour (2 h block).
func loginLockout(t *testing.T, h Harness, extend bool) *lockout.Lockout {
	t.Helper()
	ls, ok := h.Store.(lockout.Store)
	if !ok {
		t.Fatalf("%T is not a lockout.Store", h.Store)
	}
	lo, err := lockout.New(ls, lockout.Config{Name: "login", ExtendBlock: extend, Timeout: suiteTimeout, Windows: []lockout.Window{
		{Scope: "temp", Attempts: 3, Window: time.Minute, Block: 15 * time.Minute},
		{Scope: "long", Attempts: 5, Window: time.Hour, Block: 2 * time.Hour},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return lo
}

func attempt(t *testing.T, lo *lockout.Lockout, key string) lockout.Decision {
	t.Helper()
	d, err := lo.Attempt(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// RunLockout runs the lockout suite on stores that implement
// lockout.Store. Timing cases run only on fake clocks.
func RunLockout(t *testing.T, newHarness func(t *testing.T) Harness) {
	if newHarness(t).Exact {
		t.Run("BlockIsCheckedFirst", func(t *testing.T) { lockoutSequence(t, newHarness(t)) })
		t.Run("ExtendBlock", func(t *testing.T) { lockoutExtend(t, newHarness(t)) })
		t.Run("RetryAfterIsExact", func(t *testing.T) { lockoutRetryAfterExact(t, newHarness) })
	}
	t.Run("ConcurrentAttempts", func(t *testing.T) { lockoutConcurrent(t, newHarness(t)) })
	t.Run("ResetAndCheck", func(t *testing.T) { lockoutReset(t, newHarness(t)) })
	t.Run("Refund", func(t *testing.T) { lockoutRefund(t, newHarness(t)) })
}

func lockoutSequence(t *testing.T, h Harness) {
	lo := loginLockout(t, h, false)
	for i := range 3 {
		if d := attempt(t, lo, "alice"); !d.Allowed || d.Counts[0] != int64(i+1) {
			t.Fatalf("attempt %d: %+v", i+1, d)
		}
		h.Advance(time.Second)
	}
	d := attempt(t, lo, "alice")
	if d.Allowed || d.Scope != "temp" || d.RetryAfter != 15*time.Minute || d.Counts[0] != 4 || d.Limit != 3 {
		t.Fatalf("attempt 4: %+v, want blocked by temp for 15m", d)
	}
	h.Advance(2 * time.Minute) // the minute window has drained; the block has not
	if d := attempt(t, lo, "alice"); d.Allowed || d.Scope != "temp" || d.RetryAfter != 13*time.Minute {
		t.Fatalf("after the window drained: %+v, want still blocked for 13m", d)
	}
	h.Advance(13*time.Minute - time.Millisecond)
	if d := attempt(t, lo, "alice"); d.Allowed {
		t.Fatal("allowed 1 ms before the block ends")
	}
	h.Advance(time.Millisecond)
	if d := attempt(t, lo, "alice"); !d.Allowed || d.Counts[1] != 5 {
		t.Fatalf("at the block's end: %+v, want allowed, 5 attempts in the hour (none recorded during the block)", d)
	}
	d = attempt(t, lo, "alice") // the 6th in the hour trips the long window
	if d.Allowed || d.Scope != "long" || d.RetryAfter != 2*time.Hour || d.Limit != 5 {
		t.Fatalf("6th attempt in the hour: %+v, want blocked by long for 2h", d)
	}
	if d := attempt(t, lo, "bob"); !d.Allowed {
		t.Fatalf("another subject was blocked: %+v", d)
	}
}

func lockoutExtend(t *testing.T, h Harness) {
	lo := loginLockout(t, h, true)
	for range 4 {
		attempt(t, lo, "mallory")
	}
	h.Advance(10 * time.Minute)
	// the temp block restarts (15 min), but the hour window is full (5), so
	// an attempt passes only when the first attempt leaves it, in 50 min
	if d := attempt(t, lo, "mallory"); d.Allowed || d.Scope != "temp" || d.RetryAfter != 50*time.Minute {
		t.Fatalf("5th attempt, during the block, with ExtendBlock: %+v, want the temp block restarted and Retry-After 50m", d)
	}
	if d := attempt(t, lo, "mallory"); d.Allowed || d.Scope != "long" || d.RetryAfter != 2*time.Hour {
		t.Fatalf("6th attempt in the hour, during the block: %+v, want the long block started", d)
	}
}

func lockoutConcurrent(t *testing.T, h Harness) {
	ls := h.Store.(lockout.Store)
	lo, err := lockout.New(ls, lockout.Config{Name: "verify", Timeout: suiteTimeout, Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: time.Hour, Block: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	allowed := Concurrently(200, func() bool {
		d, err := lo.Attempt(context.Background(), "code-42")
		return err == nil && d.Allowed
	})
	if allowed != 5 {
		t.Fatalf("%d of 200 attempts allowed, want exactly 5", allowed)
	}
}

func lockoutReset(t *testing.T, h Harness) {
	lo := loginLockout(t, h, false)
	for range 4 {
		attempt(t, lo, "carol")
	}
	if d, err := lo.Check(context.Background(), "carol"); err != nil || d.Allowed {
		t.Fatalf("check while blocked: %+v %v", d, err)
	}
	if err := lo.Reset(context.Background(), "carol"); err != nil {
		t.Fatal(err)
	}
	if d, err := lo.Check(context.Background(), "carol"); err != nil || !d.Allowed || d.Counts[0] != 0 {
		t.Fatalf("check after reset: %+v %v", d, err)
	}
}

func lockoutRefund(t *testing.T, h Harness) {
	lo := loginLockout(t, h, false)
	var ids []string
	for range 3 {
		d := attempt(t, lo, "erin")
		ids = append(ids, d.Attempt)
	}
	if ids[0] == "" || ids[0] == ids[1] && ids[1] == ids[2] {
		t.Fatalf("attempt IDs %q: want each attempt identified", ids)
	}
	for _, id := range ids[1:] {
		if err := lo.Refund(context.Background(), "erin", id); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := lo.Check(context.Background(), "erin"); err != nil || d.Counts[0] != 1 || d.Attempt != "" {
		t.Fatalf("after refunding 2 of 3: %+v %v, want 1 counted and nothing recorded by Check", d, err)
	}
	for range 2 {
		if d := attempt(t, lo, "erin"); !d.Allowed {
			t.Fatalf("refunded attempts still count: %+v", d)
		}
	}
}

// lockoutRetryAfterExact checks, for every kind of configuration New
// accepts (a block shorter than, equal to or longer than its window; one
// window or two; ExtendBlock or not) and several paces of attempts, that an
// attempt made exactly at a denial's RetryAfter passes and one made 1 ms
// earlier does not. A client that keeps attempting at its pace until denied,
// then waits exactly RetryAfter, does so for several rounds. The 1 ms probe
// runs on a twin subject with the same history, since a probe changes state.
func lockoutRetryAfterExact(t *testing.T, newHarness func(t *testing.T) Harness) {
	configs := map[string][]lockout.Window{
		"block<window":   {{Scope: "w", Attempts: 3, Window: 6 * time.Second, Block: time.Second}},
		"block=window":   {{Scope: "w", Attempts: 3, Window: 6 * time.Second, Block: 6 * time.Second}},
		"block>window":   {{Scope: "w", Attempts: 3, Window: 6 * time.Second, Block: 20 * time.Second}},
		"two, short":     {{Scope: "temp", Attempts: 3, Window: 6 * time.Second, Block: 2 * time.Second}, {Scope: "long", Attempts: 5, Window: time.Minute, Block: 10 * time.Second}},
		"two, long":      {{Scope: "temp", Attempts: 3, Window: 6 * time.Second, Block: 6 * time.Second}, {Scope: "long", Attempts: 4, Window: time.Minute, Block: 2 * time.Minute}},
		"one attempt":    {{Scope: "w", Attempts: 1, Window: 5 * time.Second, Block: 1500 * time.Millisecond}},
		"two, same span": {{Scope: "a", Attempts: 2, Window: 10 * time.Second, Block: time.Second}, {Scope: "b", Attempts: 4, Window: 10 * time.Second, Block: 3 * time.Second}},
	}
	paces := []time.Duration{0, 700 * time.Millisecond, 1900 * time.Millisecond}
	for name, windows := range configs {
		for _, extend := range []bool{false, true} {
			for _, pace := range paces {
				t.Run(fmt.Sprintf("%s/extend=%t/pace=%s", name, extend, pace), func(t *testing.T) {
					h := newHarness(t)
					lo, err := lockout.New(h.Store.(lockout.Store), lockout.Config{Name: "exact", ExtendBlock: extend, Timeout: suiteTimeout, Windows: windows})
					if err != nil {
						t.Fatal(err)
					}
					both := func() (lockout.Decision, lockout.Decision) {
						return attempt(t, lo, "client"), attempt(t, lo, "twin")
					}
					for round := range 4 {
						var d lockout.Decision
						for n := 0; ; n++ {
							var twin lockout.Decision
							d, twin = both()
							if d.Allowed != twin.Allowed || d.RetryAfter != twin.RetryAfter {
								t.Fatalf("round %d: the twins differ: %+v %+v", round, d, twin)
							}
							if !d.Allowed {
								break
							}
							if n > 50 {
								t.Fatalf("round %d: never denied", round)
							}
							h.Advance(pace)
						}
						if d.RetryAfter <= 0 {
							t.Fatalf("round %d: denied with Retry-After %s", round, d.RetryAfter)
						}
						h.Advance(d.RetryAfter - time.Millisecond)
						if early, _ := lo.Attempt(context.Background(), "twin"); early.Allowed {
							t.Fatalf("round %d: allowed 1 ms before Retry-After %s", round, d.RetryAfter)
						}
						h.Advance(time.Millisecond)
						if at := attempt(t, lo, "client"); !at.Allowed {
							t.Fatalf("round %d: denied at Retry-After %s: %+v", round, d.RetryAfter, at)
						}
						if err := lo.Reset(context.Background(), "twin"); err != nil {
							t.Fatal(err)
						}
						if err := lo.Reset(context.Background(), "client"); err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// suiteTimeout bounds the suite's lockout calls: the suite checks what a
// store decides, not how fast, so a loaded machine must not turn a slow
// answer into a failure.
const suiteTimeout = 10 * time.Second
