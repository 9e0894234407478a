package algo

import (
	"fmt"
	"time"

	"github.com/ratekit/ratekit/internal/bounds"
)

// A Fault names a limit's parameter at fault and why; the zero Fault is
// none.
type Fault struct{ Field, Reason string }

func fault(field, reason string) Fault { return Fault{field, reason} }

// count checks a count from 1 to 2^53-1.
func count(field string, n int64) Fault {
	if n < 1 || n > bounds.MaxQuota {
		return fault(field, fmt.Sprintf("must be between 1 and 2^53-1 (got %d)", n))
	}
	return Fault{}
}

// logCount checks the quota of a limit that keeps one entry per request or
// slot (log, inflight), a kind of limit: 1 to MaxLogQuota.
func logCount(field, kind string, n int64) Fault {
	if n < 1 || n > bounds.MaxLogQuota {
		return fault(field, fmt.Sprintf("must be between 1 and %d for %s (got %d)", bounds.MaxLogQuota, kind, n))
	}
	return Fault{}
}

// Window checks a duration: whole milliseconds from MinWindow to MaxWindow.
func Window(field string, d time.Duration) Fault {
	switch {
	case d < bounds.MinWindow:
		return fault(field, fmt.Sprintf("must be at least %s (got %s)", bounds.MinWindow, d))
	case d > bounds.MaxWindow:
		return fault(field, fmt.Sprintf("must be at most %s (got %s)", bounds.MaxWindow, d))
	case d%time.Millisecond != 0:
		return fault(field, fmt.Sprintf("must be a whole number of milliseconds (got %s)", d))
	}
	return Fault{}
}

// takes lists the modifiers that apply to some algorithms only: the bucket
// width a limit may have (0: none), a factor, a queue, parameters.
type takes struct {
	precision             time.Duration
	factor, queue, params bool
}

// modifiers checks s's block and the modifiers of t, first of all of a
// limit's parameters.
func modifiers(s *Spec, t takes) Fault {
	if s.Block != 0 {
		if f := Window("block", s.Block); f.Field != "" {
			return f
		}
	}
	if s.Precision != 0 && s.Precision != t.precision {
		return fault("precision", "applies only to SlidingWindow")
	}
	if s.Factor != 0 && !t.factor {
		return fault("factor", "applies only to Suppressed")
	}
	if s.MaxWait != 0 {
		if !t.queue {
			return fault("queue", "applies only to LeakyBucket")
		}
		if f := Window("queue", s.MaxWait); f.Field != "" {
			return f
		}
	}
	if s.Params != [3]int64{} && !t.params {
		return fault("params", "apply only to custom algorithms")
	}
	for _, p := range s.Params {
		if p <= -bounds.MaxQuota || p >= bounds.MaxQuota {
			return fault("params", fmt.Sprintf("must stay within ±2^53 (got %d), as Lua numbers do", p))
		}
	}
	return Fault{}
}

// countWindow checks the modifiers of t, a count field and the window: the
// rules of a limit of so many per window.
func countWindow(s *Spec, t takes, field string) Fault {
	if f := modifiers(s, t); f.Field != "" {
		return f
	}
	if f := count(field, s.Quota); f.Field != "" {
		return f
	}
	return Window("window", s.Window)
}

// perWindow describes a limit of so many per window, e.g.
// "api: fixed 100 per 1m0s".
func perWindow(s *Spec) string {
	return fmt.Sprintf("%s: %s %d per %s", s.Name, s.Algorithm, s.Quota, s.Window)
}

// shareCount makes s's quota one of n instances' share, at least 1, and
// its rate the same number, as the constructors of counted limits set it.
func shareCount(s *Spec, n int64) bool {
	s.Quota = max(s.Quota/n, 1)
	s.Rate = float64(s.Quota)
	return true
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }
