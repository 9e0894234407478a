// Package observetest holds what the tests of metrics modules
// (observe/prometheus, observe/otel) share: the scenarios they drive
// through real ratekit pipelines (ratekit.Middleware over memstore, shadow
// limits, a failing store, a missing key, a fallback store, lockouts,
// InFlight slots held in a handler and released) or straight into the
// observer (concurrency, an unknown outcome), each with the exact count
// every series must then read, in a form of neither module (Want). A
// module renders a Want as its own series (Format.Render) and compares
// them with every series it gathers (Compare).
//
// It imports "testing": only tests may import it.
package observetest

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratekit/ratekit/observe"
)

// A Metric names a metric of both modules, whatever each calls it.
type Metric string

// The metrics.
const (
	Decisions         Metric = "decisions"           // by policy and outcome
	NearLimit         Metric = "near_limit"          // by policy
	StoreErrors       Metric = "store_errors"        // by policy
	FallbackDecisions Metric = "fallback_decisions"  // by policy
	LatencyCount      Metric = "store_latency_count" // the latency histogram's sample count, by policy
	FallbackActive    Metric = "fallback_active"     // the gauge, one for the whole Metrics
	InFlight          Metric = "inflight"            // slots in use, by InFlight limit (policy)
)

// Counts are what one policy's series read.
type Counts struct {
	// Decisions by outcome; an error is also a store error.
	Allowed, Denied, ShadowDenied, Errors, Invalid int
	// Unknown counts the decisions of an outcome this version does not
	// know, labelled "unknown".
	Unknown int
	// Near-limit decisions, fallback decisions and latency samples.
	Near, Fallback, Latency int
}

// Want is what a Metrics must hold: the fallback-active gauge, the series
// of every policy that had a decision, and the in-flight series of every
// InFlight limit whose slots were taken; no other.
type Want struct {
	Active   int
	Policies map[string]Counts
	// InFlight is the slots in use by InFlight limit name. A name present
	// has a series in both modules, 0 once its slots are back; a name
	// absent has none.
	InFlight map[string]int
}

// A Format is how a module writes a series as a key of its gathered
// values: name{label=value,...}, the labels sorted by name.
type Format struct {
	// Names are the module's names of the metrics.
	Names map[Metric]string
	// Policy and Outcome are the names of the two labels.
	Policy, Outcome string
	// Quote writes label values quoted, as Go (and Prometheus) quote them.
	Quote bool
	// Zeros: a policy's series all exist, at 0, from its first decision
	// (Prometheus). Without it, a series exists only once it has moved
	// (an OpenTelemetry data point per attribute set measured); the
	// fallback-active gauge and the in-flight series of Want.InFlight
	// exist in both.
	Zeros bool
}

// Render returns every series w describes, keyed in f, with its value: the
// fallback-active gauge, and for each policy its decisions by every outcome
// of observe, its near limits, store errors, fallback decisions and latency
// count (those at 0 only with f.Zeros); the decisions of an unknown
// outcome only when there are some; and the in-flight series of each
// name in w.InFlight, labelled with the policy label.
func (f Format) Render(w Want) map[string]float64 {
	out := map[string]float64{}
	put := func(m Metric, policy, outcome string, n int) {
		if n == 0 && !f.Zeros && m != FallbackActive && m != InFlight {
			return
		}
		var labels []string
		for _, l := range [][2]string{{f.Policy, policy}, {f.Outcome, outcome}} {
			if l[1] == "" {
				continue
			}
			if f.Quote {
				l[1] = strconv.Quote(l[1])
			}
			labels = append(labels, l[0]+"="+l[1])
		}
		slices.Sort(labels)
		out[f.Names[m]+"{"+strings.Join(labels, ",")+"}"] = float64(n)
	}
	put(FallbackActive, "", "", w.Active)
	for name, n := range w.InFlight {
		put(InFlight, name, "", n)
	}
	for policy, c := range w.Policies {
		for outcome, n := range map[string]int{"allowed": c.Allowed, "denied": c.Denied,
			"shadow_denied": c.ShadowDenied, "error": c.Errors, "invalid": c.Invalid} {
			put(Decisions, policy, outcome, n)
		}
		if c.Unknown > 0 {
			put(Decisions, policy, "unknown", c.Unknown)
		}
		put(NearLimit, policy, "", c.Near)
		put(StoreErrors, policy, "", c.Errors)
		put(FallbackDecisions, policy, "", c.Fallback)
		put(LatencyCount, policy, "", c.Latency)
	}
	return out
}

// Compare fails t for every series of want that got lacks or reads
// otherwise, and for every series of got that want lacks. Both map a
// module's series names (with their labels) to values.
func Compare(t testing.TB, got, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present: %v), want %v", k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected series %s = %v", k, v)
		}
	}
}

// Setup returns, for the test t, a fresh observer under test and a check
// that fails t unless that observer's metrics hold exactly what w
// describes.
type Setup func(t *testing.T) (obs observe.Observer, check func(w Want))

// Run runs every scenario of the package as a subtest of t, each on
// metrics of its own from setup.
func Run(t *testing.T, setup Setup) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, setup) })
	}
}

// one returns the Want of a single policy, the gauge at active.
func one(active int, policy string, c Counts) Want {
	return Want{Active: active, Policies: map[string]Counts{policy: c}}
}

// statuses fails t unless got holds exactly the statuses of want (an
// entry of 0 in want stands for a status got lacks).
func statuses(t *testing.T, got, want map[int]int) {
	t.Helper()
	want = maps.Clone(want)
	maps.DeleteFunc(want, func(_, n int) bool { return n == 0 })
	if !maps.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
}
