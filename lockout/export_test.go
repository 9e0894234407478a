package lockout

import "time"

// SetClock sets the clock lo reads device tokens' expiry on.
func SetClock(lo *Lockout, now func() time.Time) { lo.now = now }
