// Package elapsed is the clock of the stores that keep time in process (the
// deny cache, leases): nanoseconds since the store was built, read from the
// monotonic clock or from a clock a test injects.
package elapsed

import "time"

// A Clock reads nanoseconds since New. Its zero value is not usable; it is
// safe for concurrent use when its now is.
type Clock struct {
	now  func() time.Time // nil: the monotonic clock
	base time.Time        // the clock's reading at New
}

// New returns a Clock that counts from now's reading (nil: time.Now).
func New(now func() time.Time) Clock {
	if now == nil {
		return Clock{base: time.Now()}
	}
	return Clock{now: now, base: now()}
}

// Nanos returns the nanoseconds since New. On the default clock that is
// time.Since, which reads only the monotonic clock.
func (c Clock) Nanos() int64 {
	if c.now == nil {
		return int64(time.Since(c.base))
	}
	return int64(c.now().Sub(c.base))
}
