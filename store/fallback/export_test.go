package fallback

import (
	"time"

	"github.com/ratekit/ratekit"
)

// NewWithClock is New with the clock the breaker times its probes by.
func NewWithClock(primary, local ratekit.Store, cfg Config, now func() time.Time) (*Store, error) {
	return newStore(primary, local, cfg, now)
}

// WaitProbes returns when no probe of s is in flight.
func WaitProbes(s *Store) { s.probes.Wait() }

// Scaled returns the limits s's local store is asked with.
func Scaled(s *Store, limits []ratekit.Limit) []ratekit.Limit {
	return scaled(limits, int64(s.cfg.Instances))
}

// ConfigOf returns s's configuration, defaults applied.
func ConfigOf(s *Store) Config { return s.cfg }
