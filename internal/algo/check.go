package algo

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// A Fault names a limit's parameter at fault and why; the zero Fault is none.
type Fault struct{ Field, Reason string }

// A check keeps the first Fault of a limit's checks.
type check struct{ Fault }

func (c *check) fail(bad bool, field, format string, args ...any) {
	if bad && c.Field == "" {
		c.Fault = Fault{field, fmt.Sprintf(format, args...)}
	}
}

// count checks a count from 1 to 2^53-1.
func (c *check) count(field string, n int64) {
	c.fail(n < 1 || n > bounds.MaxQuota, field, "must be between 1 and 2^53-1 (got %d)", n)
}

// logCount checks the count of a kind of limit that keeps one entry per
// request or slot: 1 to MaxLogQuota.
func (c *check) logCount(field, kind string, n int64) {
	c.fail(n < 1 || n > bounds.MaxLogQuota, field, "must be between 1 and %d for %s (got %d)", bounds.MaxLogQuota, kind, n)
}

// window checks a duration: whole milliseconds from MinWindow to MaxWindow.
func (c *check) window(field string, d time.Duration) {
	c.fail(d < bounds.MinWindow, field, "must be at least %s (got %s)", bounds.MinWindow, d)
	c.fail(d > bounds.MaxWindow, field, "must be at most %s (got %s)", bounds.MaxWindow, d)
	c.fail(d%time.Millisecond != 0, field, "must be a whole number of milliseconds (got %s)", d)
}

// takes lists the modifiers that apply to some algorithms only: the bucket
// width a limit may have (0: none), a factor, a queue, parameters.
type takes struct {
	precision             time.Duration
	factor, queue, params bool
}

// modifiers checks s's block and the modifiers of t, before any other field.
func (c *check) modifiers(s *Spec, t takes) {
	if s.Block != 0 {
		c.window("block", s.Block)
	}
	c.fail(s.Precision != 0 && s.Precision != t.precision, "precision", "applies only to SlidingWindow")
	c.fail(s.Factor != 0 && !t.factor, "factor", "applies only to Suppressed")
	if s.MaxWait != 0 {
		c.fail(!t.queue, "queue", "applies only to LeakyBucket")
		c.window("queue", s.MaxWait)
	}
	c.fail(s.Params != [3]int64{} && !t.params, "params", "apply only to custom algorithms")
	for _, p := range s.Params {
		c.fail(p <= -bounds.MaxQuota || p >= bounds.MaxQuota, "params", "must stay within ±2^53 (got %d), as Lua numbers do", p)
	}
}

// counted checks a limit of so many per window: modifiers, count, window.
func counted(s *Spec, t takes, field string) check {
	var c check
	c.modifiers(s, t)
	c.count(field, s.Quota)
	c.window("window", s.Window)
	return c
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }
