package ratekitprom

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekit/ratekit/observe"
)

// Metrics counts ratekit's decisions as the Prometheus series of the package
// documentation; register it once. It is safe for concurrent use. The zero
// value is not usable: build it with New.
type Metrics struct {
	decisions      *prometheus.CounterVec
	nearLimit      *prometheus.CounterVec
	storeErrors    *prometheus.CounterVec
	fallback       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	fallbackActive prometheus.Gauge
	overrides      *prometheus.CounterVec
	inFlight       *prometheus.GaugeVec
	policies       *observe.PolicyMap[*series]          // built by series
	held           *observe.PolicyMap[prometheus.Gauge] // inFlight's child per InFlight limit name
}

// series are one policy's children of every vector, looked up once: an
// Event then costs no label hashing and no allocation.
type series struct {
	decisions   [observe.Invalid + 1]prometheus.Counter // by Outcome
	nearLimit   prometheus.Counter
	storeErrors prometheus.Counter
	fallback    prometheus.Counter
	latency     prometheus.Observer
}

// New returns Metrics configured by opts, or an error reporting every
// invalid option at once. It registers nothing.
func New(opts ...Option) (*Metrics, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: c.namespace, Name: name, Help: help, ConstLabels: c.labels,
		}, labels)
	}
	m := &Metrics{
		decisions: counter("decisions_total",
			"Rate-limit decisions by binding policy and outcome (allowed, denied, shadow_denied, error, invalid).",
			"policy", "outcome"),
		nearLimit: counter("near_limit_total",
			"Allowed decisions whose binding limit had at most a fifth of its quota left.", "policy"),
		storeErrors: counter("store_errors_total",
			"Decisions the rate-limit store failed or ran out of time to make.", "policy"),
		overrides: counter("overrides_total",
			"Overrides of a limit's numbers for one subject set or cleared, by policy.", "policy"),
		fallback: counter("fallback_decisions_total",
			"Decisions made by a fallback store while the primary store was unavailable.", "policy"),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: c.namespace, Name: "store_latency_seconds", ConstLabels: c.labels, Buckets: c.buckets,
			Help: "Time the rate-limit store took to answer, for every decision that asked it (errors included).",
		}, []string{"policy"}),
		fallbackActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: c.namespace, Name: "fallback_active", ConstLabels: c.labels,
			Help: "1 when the latest decision made by a store came from a fallback store, 0 otherwise.",
		}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: c.namespace, Name: "inflight", ConstLabels: c.labels,
			Help: "Slots of InFlight limits held by requests of this instance, by policy.",
		}, []string{"policy"}),
	}
	m.policies = observe.NewPolicyMap(m.series)
	m.held = observe.NewPolicyMap(func(name string) prometheus.Gauge { return m.inFlight.WithLabelValues(name) })
	return m, nil
}

// series creates policy's children of every vector.
func (m *Metrics) series(policy string) *series {
	s := &series{
		nearLimit:   m.nearLimit.WithLabelValues(policy),
		storeErrors: m.storeErrors.WithLabelValues(policy),
		fallback:    m.fallback.WithLabelValues(policy),
		latency:     m.latency.WithLabelValues(policy),
	}
	for o := range s.decisions {
		s.decisions[o] = m.decisions.WithLabelValues(policy, observe.Outcome(o).String())
	}
	return s
}

// Observe counts one decision; a Released event only moves ratekit_inflight,
// an Overridden one ratekit_overrides_total.
// It never allocates once the policy's series exist, and ignores ctx.
func (m *Metrics) Observe(_ context.Context, e observe.Event) {
	if d := e.HeldDelta(); d != 0 {
		for name := range strings.SplitSeq(e.Held, ",") {
			m.held.Get(name).Add(float64(d))
		}
	}
	if e.Outcome == observe.Released {
		return
	}
	if e.Outcome == observe.Overridden { // an operator's change, no decision
		m.overrides.WithLabelValues(e.Policy).Inc()
		return
	}
	s := m.policies.Get(e.Policy)
	if int(e.Outcome) < len(s.decisions) {
		s.decisions[e.Outcome].Inc()
	} else {
		m.decisions.WithLabelValues(e.Policy, e.Outcome.String()).Inc()
	}
	if v, set := e.FallbackActive(); set {
		m.fallbackActive.Set(float64(v))
	}
	if e.Outcome == observe.Error {
		s.storeErrors.Inc()
	}
	if e.Fallback {
		s.fallback.Inc()
	}
	if e.NearLimit() {
		s.nearLimit.Inc()
	}
	if e.Latency > 0 {
		s.latency.Observe(e.Latency.Seconds())
	}
}

// Describe sends the descriptions of every series (prometheus.Collector).
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect sends the current value of every series (prometheus.Collector).
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

func (m *Metrics) collectors() [8]prometheus.Collector {
	return [8]prometheus.Collector{m.decisions, m.nearLimit, m.storeErrors, m.fallback, m.latency, m.fallbackActive, m.inFlight, m.overrides}
}
