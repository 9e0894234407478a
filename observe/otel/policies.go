package ratekitotel

import (
	"sync"
	"sync/atomic"

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
// built once: an Event then costs no attribute sorting and no allocation.
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

// policies maps policy names to their series. Reads are lock-free: the map
// is never changed once published; a new policy publishes a copy. Policy
// names come from configuration, so copies are rare and small.
type policies struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]*series]
}

// get returns policy's series, building them on the policy's first event.
func (p *policies) get(policy string) *series {
	if m := p.m.Load(); m != nil {
		if s, ok := (*m)[policy]; ok {
			return s
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.m.Load()
	next := map[string]*series{}
	if old != nil {
		if s, ok := (*old)[policy]; ok {
			return s
		}
		next = make(map[string]*series, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
	}
	s := newSeries(policy)
	next[policy] = s
	p.m.Store(&next)
	return s
}
