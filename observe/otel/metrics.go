package ratekitotel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratekit/ratekit/observe"
)

// Attribute keys of the data points.
const (
	PolicyKey  = attribute.Key("ratekit.policy")  // the binding policy (observe.Event.Policy)
	OutcomeKey = attribute.Key("ratekit.outcome") // a decision's outcome (observe.Outcome.String)
)

// Metrics records ratekit's decisions on the OpenTelemetry instruments of
// the package documentation. It is safe for concurrent use. The zero value
// is not usable: build it with New.
type Metrics struct {
	decisions   metric.Int64Counter
	nearLimit   metric.Int64Counter
	storeErrors metric.Int64Counter
	fallback    metric.Int64Counter
	latency     metric.Float64Histogram
	inFlight    metric.Int64UpDownCounter
	overrides   metric.Int64Counter
	active      atomic.Int64 // ratekit.fallback.active, read by its callback
	policies    *observe.PolicyMap[*series]
}

// New creates the instruments on a Meter of ScopeName from the
// MeterProvider of WithMeterProvider (the global one by default). It reports
// an invalid option, or an instrument the provider refused, as an error.
func New(opts ...Option) (*Metrics, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	meter := c.provider.Meter(ScopeName)
	m := &Metrics{policies: observe.NewPolicyMap(newSeries)}
	var errs [8]error
	m.decisions, errs[0] = meter.Int64Counter("ratekit.decisions", metric.WithUnit("{decision}"),
		metric.WithDescription("Rate-limit decisions by binding policy and outcome (allowed, denied, shadow_denied, error, invalid)."))
	m.nearLimit, errs[1] = meter.Int64Counter("ratekit.near_limit", metric.WithUnit("{decision}"),
		metric.WithDescription("Allowed decisions whose binding limit had at most a fifth of its quota left."))
	m.storeErrors, errs[2] = meter.Int64Counter("ratekit.store.errors", metric.WithUnit("{error}"),
		metric.WithDescription("Decisions the rate-limit store failed or ran out of time to make."))
	m.fallback, errs[3] = meter.Int64Counter("ratekit.fallback.decisions", metric.WithUnit("{decision}"),
		metric.WithDescription("Decisions made by a fallback store while the primary store was unavailable."))
	m.latency, errs[4] = meter.Float64Histogram("ratekit.store.latency", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(c.buckets...),
		metric.WithDescription("Time the rate-limit store took to answer, for every decision that asked it (errors included)."))
	_, errs[5] = meter.Int64ObservableGauge("ratekit.fallback.active", metric.WithUnit("{state}"),
		metric.WithDescription("1 when the latest decision made by a store came from a fallback store, 0 otherwise."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(m.active.Load())
			return nil
		}))
	m.inFlight, errs[6] = meter.Int64UpDownCounter("ratekit.inflight.active_requests", metric.WithUnit("{request}"),
		metric.WithDescription("Requests of this instance holding a slot of an InFlight limit, by policy."))
	m.overrides, errs[7] = meter.Int64Counter("ratekit.overrides", metric.WithUnit("{change}"),
		metric.WithDescription("Overrides of a limit's numbers for one subject set or cleared, by policy."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("ratekit: creating metric instruments: %w", err)
	}
	return m, nil
}

// Observe records one decision; a Released event only moves
// ratekit.inflight.active_requests, an Overridden one ratekit.overrides. ctx reaches the instruments (for
// exemplars). Once a policy's attribute sets exist, Observe allocates nothing.
func (m *Metrics) Observe(ctx context.Context, e observe.Event) {
	if d := e.HeldDelta(); d != 0 {
		for name := range strings.SplitSeq(e.Held, ",") {
			m.inFlight.Add(ctx, d, m.policies.Get(name).policy...)
		}
	}
	if e.Outcome == observe.Released {
		return
	}
	s := m.policies.Get(e.Policy)
	if e.Outcome == observe.Overridden { // an operator's change, no decision
		m.overrides.Add(ctx, 1, s.policy...)
		return
	}
	if int(e.Outcome) < len(s.decisions) {
		m.decisions.Add(ctx, 1, s.decisions[e.Outcome]...)
	} else {
		m.decisions.Add(ctx, 1, outcomeOption(e.Policy, e.Outcome))
	}
	if v, set := e.FallbackActive(); set {
		m.active.Store(v)
	}
	if e.Outcome == observe.Error {
		m.storeErrors.Add(ctx, 1, s.policy...)
	}
	if e.Fallback {
		m.fallback.Add(ctx, 1, s.policy...)
	}
	if e.NearLimit() {
		m.nearLimit.Add(ctx, 1, s.policy...)
	}
	if e.Latency > 0 {
		m.latency.Record(ctx, e.Latency.Seconds(), s.latency...)
	}
}

// series are one policy's (or InFlight limit's) measurement options, with
// their attribute sets built once: an Event then costs no attribute sorting
// and no allocation.
type series struct {
	decisions [observe.Invalid + 1][]metric.AddOption // by Outcome
	policy    []metric.AddOption
	latency   []metric.RecordOption
}

func newSeries(policy string) *series {
	set := attribute.NewSet(PolicyKey.String(policy))
	s := &series{
		policy:  []metric.AddOption{metric.WithAttributeSet(set)},
		latency: []metric.RecordOption{metric.WithAttributeSet(set)},
	}
	for o := range s.decisions {
		s.decisions[o] = []metric.AddOption{outcomeOption(policy, observe.Outcome(o))}
	}
	return s
}

func outcomeOption(policy string, o observe.Outcome) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(PolicyKey.String(policy), OutcomeKey.String(o.String())))
}
