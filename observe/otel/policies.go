package ratekitotel

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratekit/ratekit/observe"
)

// Attribute keys of the data points.
const (
	// PolicyKey names the binding policy (observe.Event.Policy).
	PolicyKey = attribute.Key("ratekit.policy")
	// OutcomeKey names the outcome of a decision (observe.Outcome.String).
	OutcomeKey = attribute.Key("ratekit.outcome")
)

// series are one policy's measurement options, with their attribute sets
// built once (the Metrics' policycache.Cache holds them): an Event then
// costs no attribute sorting and no allocation.
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

// heldOptions returns the measurement options of each InFlight limit named
// in held, a list as in observe.Event.Held.
func heldOptions(held string) [][]metric.AddOption {
	var opts [][]metric.AddOption
	for _, name := range strings.Split(held, ",") {
		opts = append(opts, []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(PolicyKey.String(name)))})
	}
	return opts
}
