package ratekitotel

import (
	"cmp"
	"fmt"
	"math"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of every instrument: this
// package's import path.
const ScopeName = "github.com/ratekit/ratekit/observe/otel"

// DefaultBuckets returns the bucket boundaries, in seconds, that
// ratekit.store.latency advises when WithBuckets is not given (a View can
// override them), up to 250 ms so that a call cut off by
// ratekit.DefaultTimeout (100 ms) lands in the last bucket but one; each
// call returns a new slice.
func DefaultBuckets() []float64 { return []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25} }

// An Option configures New; options are immutable and safe to share. A nil
// Option is a programming error.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	provider metric.MeterProvider
	buckets  []float64
}

// WithMeterProvider sets the MeterProvider the instruments are created on
// (default, and when mp is nil: otel.GetMeterProvider(), the global one).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.provider = mp })
}

// WithBuckets sets the bucket boundaries, in seconds and in increasing
// order, that the latency histogram advises (default DefaultBuckets()). The
// slice is copied.
func WithBuckets(bounds []float64) Option {
	b := append([]float64(nil), bounds...)
	return optionFunc(func(c *config) { c.buckets = b })
}

// newConfig applies opts over the defaults and checks them.
func newConfig(opts []Option) (*config, error) {
	c := &config{}
	for _, o := range opts {
		o.apply(c)
	}
	c.provider = cmp.Or(c.provider, otel.GetMeterProvider())
	if len(c.buckets) == 0 {
		c.buckets = DefaultBuckets()
	}
	for i, b := range c.buckets {
		if math.IsNaN(b) || math.IsInf(b, 0) || i > 0 && b <= c.buckets[i-1] {
			return nil, fmt.Errorf("ratekit: latency buckets must be finite and increase (got %g after %g)", b, c.buckets[max(i-1, 0)])
		}
	}
	return c, nil
}
