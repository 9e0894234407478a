package elapsed

import (
	"testing"
	"time"
)

// TestNanos: an injected clock is read relative to New; the default clock
// never runs backwards.
func TestNanos(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c := New(func() time.Time { return at })
	at = at.Add(1500 * time.Millisecond)
	if got := c.Nanos(); got != int64(1500*time.Millisecond) {
		t.Fatalf("Nanos after 1.5 s = %d", got)
	}
	d := New(nil)
	if a, b := d.Nanos(), d.Nanos(); a < 0 || b < a {
		t.Fatalf("default clock read %d then %d", a, b)
	}
}
