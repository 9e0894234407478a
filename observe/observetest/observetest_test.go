package observetest_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/observe/observetest"
)

// counter counts Events straight into a Want: the reference the metrics
// modules are held to, so that the scenarios' expectations are checked
// here too.
type counter struct {
	mu sync.Mutex
	w  observetest.Want
}

func (c *counter) Observe(_ context.Context, e observe.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := e.HeldDelta(); d != 0 {
		for _, name := range strings.Split(e.Held, ",") {
			c.w.InFlight[name] += int(d)
		}
	}
	if e.Outcome == observe.Released { // not a decision
		return
	}
	p := c.w.Policies[e.Policy]
	switch e.Outcome {
	case observe.Allowed:
		p.Allowed++
	case observe.Denied:
		p.Denied++
	case observe.ShadowDenied:
		p.ShadowDenied++
	case observe.Error:
		p.Errors++
	case observe.Invalid:
		p.Invalid++
	default:
		p.Unknown++
	}
	if e.NearLimit() {
		p.Near++
	}
	if e.Fallback {
		p.Fallback++
	}
	if e.Latency > 0 {
		p.Latency++
	}
	if v, set := e.FallbackActive(); set {
		c.w.Active = int(v)
	}
	c.w.Policies[e.Policy] = p
}

var neutral = observetest.Format{
	Names: map[observetest.Metric]string{
		observetest.Decisions: "decisions", observetest.NearLimit: "near_limit",
		observetest.StoreErrors: "store_errors", observetest.FallbackDecisions: "fallback_decisions",
		observetest.LatencyCount: "latency_count", observetest.FallbackActive: "fallback_active",
		observetest.InFlight: "inflight",
	},
	Policy: "policy", Outcome: "outcome", Zeros: true,
}

func setup(t *testing.T) (observe.Observer, func(observetest.Want)) {
	c := &counter{w: observetest.Want{Policies: map[string]observetest.Counts{}, InFlight: map[string]int{}}}
	return c, func(w observetest.Want) {
		t.Helper()
		c.mu.Lock()
		defer c.mu.Unlock()
		observetest.Compare(t, neutral.Render(c.w), neutral.Render(w))
	}
}

// TestScenarios: every scenario's expectations hold for the reference.
func TestScenarios(t *testing.T) {
	observetest.Run(t, setup)
}

// TestDriveSubjects: the subjects scenario's expectations hold for the
// reference, and every subject reached it.
func TestDriveSubjects(t *testing.T) {
	seen := map[string]bool{}
	var mu sync.Mutex
	obs, check := setup(t)
	spy := observe.Func(func(_ context.Context, e observe.Event) {
		mu.Lock()
		seen[e.Subject] = true
		mu.Unlock()
	})
	check(observetest.DriveSubjects(t, observe.Join(obs, spy)))
	for _, s := range observetest.Subjects {
		if !seen[s] {
			t.Errorf("no decision about %q", s)
		}
	}
}

// TestRender: the keys and values of both formats; zeros only with Zeros,
// the gauge and the in-flight series of Want.InFlight always, unknown
// outcomes only when counted.
func TestRender(t *testing.T) {
	w := observetest.Want{Active: 1, Policies: map[string]observetest.Counts{"a,b": {Allowed: 2, Errors: 1, Unknown: 1}},
		InFlight: map[string]int{"a": 0, "b": 3}}
	quoted := neutral
	quoted.Quote = true
	got := quoted.Render(w)
	for k, v := range map[string]float64{
		`fallback_active{}`:                         1,
		`decisions{outcome="allowed",policy="a,b"}`: 2,
		`decisions{outcome="denied",policy="a,b"}`:  0,
		`decisions{outcome="error",policy="a,b"}`:   1,
		`decisions{outcome="unknown",policy="a,b"}`: 1,
		`store_errors{policy="a,b"}`:                1,
		`near_limit{policy="a,b"}`:                  0,
		`latency_count{policy="a,b"}`:               0,
		`inflight{policy="a"}`:                      0,
		`inflight{policy="b"}`:                      3,
	} {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present: %v), want %v", k, g, ok, v)
		}
	}
	if len(got) != 1+6+4+2 {
		t.Errorf("%d series, want 13: %v", len(got), got)
	}
	sparse := neutral
	sparse.Zeros = false
	w.Active = 0
	got = sparse.Render(w)
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	if len(got) != 7 || got["fallback_active{}"] != 0 || got["decisions{outcome=error,policy=a,b}"] != 1 ||
		got["inflight{policy=a}"] != 0 || got["inflight{policy=b}"] != 3 {
		t.Errorf("sparse: %s", strings.Join(keys, " "))
	}
}
