package fallback

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/ratekit/ratekit"
)

// Defaults of the Config fields left zero.
const (
	DefaultFailures     = 3
	DefaultRetry        = 250 * time.Millisecond
	DefaultProbeTimeout = 100 * time.Millisecond
)

// Config configures a Store. The zero Config is valid: every field has a
// default, stated with it. A Config is a plain value; New copies it.
type Config struct {
	// Instances is how many instances of the service share the primary's
	// limits (default 1); the local store enforces one instance's share.
	Instances int
	// Failures is how many consecutive failed calls to the primary open the
	// breaker (default DefaultFailures). Every failed call is decided locally.
	Failures int
	// Retry is how often, while the breaker is open, a background probe asks
	// the primary whether it is back (default DefaultRetry; at least 1 ms).
	Retry time.Duration
	// ProbeTimeout bounds each probe (default DefaultProbeTimeout; at least
	// 1 ms). A probe never delays a request.
	ProbeTimeout time.Duration
	// OnChange, when set, is called once per change of the breaker: when it
	// opens, with the primary's last error, and when it closes, with nil. It
	// runs on the goroutine that changed the state (a request's or a
	// probe's), so it must be quick and safe for concurrent use.
	OnChange func(open bool, err error)
}

// withDefaults returns c with its zero fields set to their defaults, or an
// error naming every field that is out of range and how to fix it.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("ratekit: fallback: "+format, args...))
	}
	if !orDefault(&c.Instances, 1, 1) {
		bad("Config.Instances is %d; set it to the number of instances that share the primary store's limits (0 means 1)", c.Instances)
	}
	if !orDefault(&c.Failures, DefaultFailures, 1) {
		bad("Config.Failures is %d; set it to 1 or more consecutive failures (0 means %d)", c.Failures, DefaultFailures)
	}
	if !orDefault(&c.Retry, DefaultRetry, time.Millisecond) {
		bad("Config.Retry is %v; set it to 1ms or more (0 means %v)", c.Retry, DefaultRetry)
	}
	if !orDefault(&c.ProbeTimeout, DefaultProbeTimeout, time.Millisecond) {
		bad("Config.ProbeTimeout is %v; set it to 1ms or more (0 means %v)", c.ProbeTimeout, DefaultProbeTimeout)
	}
	return c, errors.Join(errs...)
}

// orDefault sets a zero *v to def and reports whether *v is at least least.
func orDefault[T int | time.Duration](v *T, def, least T) bool {
	if *v == 0 {
		*v = def
	}
	return *v >= least
}

// checkStores reports a missing store, or one store passed as both.
func checkStores(primary, local ratekit.Store) error {
	switch {
	case primary == nil:
		return errors.New("ratekit: fallback: the primary store is nil; pass the shared store, e.g. a redisstore.Store")
	case local == nil:
		return errors.New("ratekit: fallback: the local store is nil; pass memstore.New()")
	case reflect.TypeOf(primary) == reflect.TypeOf(local) && reflect.TypeOf(primary).Comparable() && primary == local:
		return errors.New("ratekit: fallback: the primary and the local store are the same store; pass memstore.New() as the local one")
	}
	return nil
}
