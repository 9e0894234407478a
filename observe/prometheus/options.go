package ratekitprom

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
)

// DefaultBuckets returns the latency histogram's bucket bounds in seconds
// when WithBuckets is not given, up to 250 ms so that a call cut off by
// ratekit.DefaultTimeout (100 ms) lands in the last bucket but one; each
// call returns a new slice.
func DefaultBuckets() []float64 { return []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25} }

// An Option configures New; options are immutable and safe to share. A nil
// Option is a programming error.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	namespace string
	buckets   []float64
	labels    prometheus.Labels
}

// WithNamespace sets the prefix of every metric name (default "ratekit",
// giving ratekit_decisions_total). An empty namespace leaves names
// unprefixed (decisions_total).
func WithNamespace(ns string) Option {
	return optionFunc(func(c *config) { c.namespace = ns })
}

// WithBuckets sets the latency histogram's bucket bounds in seconds, in
// increasing order (default DefaultBuckets()). The slice is copied.
func WithBuckets(bounds []float64) Option {
	b := append([]float64(nil), bounds...)
	return optionFunc(func(c *config) { c.buckets = b })
}

// WithConstLabels adds labels with fixed values to every series, e.g.
// {"service": "checkout"}. They may not be named policy, outcome or le. The
// map is copied.
func WithConstLabels(labels prometheus.Labels) Option {
	l := maps.Clone(labels)
	return optionFunc(func(c *config) { c.labels = l })
}

// newConfig applies opts over the defaults and reports every invalid one at
// once.
func newConfig(opts []Option) (*config, error) {
	c := &config{namespace: "ratekit"}
	for _, o := range opts {
		o.apply(c)
	}
	if len(c.buckets) == 0 {
		c.buckets = DefaultBuckets()
	}
	var errs []error
	if c.namespace != "" && !model.LegacyValidation.IsValidMetricName(c.namespace) {
		errs = append(errs, fmt.Errorf("ratekit: metrics namespace %q is not a valid Prometheus name ([a-zA-Z_:][a-zA-Z0-9_:]*)", c.namespace))
	}
	for i, b := range c.buckets {
		if math.IsNaN(b) || i > 0 && b <= c.buckets[i-1] {
			errs = append(errs, fmt.Errorf("ratekit: latency buckets must increase (got %g after %g)", b, c.buckets[max(i-1, 0)]))
			break
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.labels)) {
		switch {
		case k == "policy" || k == "outcome" || k == "le":
			errs = append(errs, fmt.Errorf("ratekit: const label %q is reserved for the metrics' own labels", k))
		case !model.LegacyValidation.IsValidLabelName(k) || strings.HasPrefix(k, "__"):
			errs = append(errs, fmt.Errorf("ratekit: const label name %q is not valid ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)", k))
		case !utf8.ValidString(c.labels[k]):
			errs = append(errs, fmt.Errorf("ratekit: const label %q has a value that is not UTF-8", k))
		}
	}
	return c, errors.Join(errs...)
}
