package ratekitprom_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekit/ratekit/observe"
	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
)

// TestNamespaceLabelsBuckets: the namespace prefixes every family, const
// labels mark every series, and the histogram has the buckets asked for.
func TestNamespaceLabelsBuckets(t *testing.T) {
	m, reg := newMetrics(t, ratekitprom.WithNamespace("edge"),
		ratekitprom.WithConstLabels(prometheus.Labels{"service": "checkout"}),
		ratekitprom.WithBuckets([]float64{0.01, 1}))
	m.Observe(context.Background(), observe.Event{Policy: "api", Quota: 5, Remaining: 4, Latency: 20 * time.Millisecond})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
		for _, s := range f.GetMetric() {
			if !slices.ContainsFunc(s.GetLabel(), func(l *dtoLabel) bool { return l.GetName() == "service" && l.GetValue() == "checkout" }) {
				t.Errorf("%s: series without service=checkout: %v", f.GetName(), s.GetLabel())
			}
			if h := s.GetHistogram(); h != nil {
				var bounds []float64
				for _, b := range h.GetBucket() {
					bounds = append(bounds, b.GetUpperBound())
				}
				if !slices.Equal(bounds, []float64{0.01, 1}) || h.GetBucket()[0].GetCumulativeCount() != 0 || h.GetBucket()[1].GetCumulativeCount() != 1 {
					t.Errorf("buckets %v: %v", bounds, h.GetBucket())
				}
			}
		}
	}
	wantNames := []string{"edge_decisions_total", "edge_fallback_active", "edge_fallback_decisions_total",
		"edge_near_limit_total", "edge_store_errors_total", "edge_store_latency_seconds"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("families %v, want %v", names, wantNames)
	}
}

// TestEmptyNamespace: no prefix at all.
func TestEmptyNamespace(t *testing.T) {
	m, reg := newMetrics(t, ratekitprom.WithNamespace(""))
	m.Observe(context.Background(), observe.Event{Policy: "api"})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 6 || families[0].GetName() != "decisions_total" {
		t.Fatalf("families: %d, first %q", len(families), families[0].GetName())
	}
}

// TestInvalidOptions: New reports every invalid option, prefixed once.
func TestInvalidOptions(t *testing.T) {
	for _, c := range []struct {
		opts []ratekitprom.Option
		want []string
	}{
		{[]ratekitprom.Option{ratekitprom.WithNamespace("rate-kit")}, []string{`namespace "rate-kit"`}},
		{[]ratekitprom.Option{ratekitprom.WithNamespace("9kit")}, []string{`namespace "9kit"`}},
		{[]ratekitprom.Option{ratekitprom.WithBuckets([]float64{0.1, 0.1})}, []string{"buckets must increase (got 0.1 after 0.1)"}},
		{[]ratekitprom.Option{ratekitprom.WithBuckets([]float64{1, 0.5})}, []string{"got 0.5 after 1"}},
		{[]ratekitprom.Option{ratekitprom.WithBuckets([]float64{math.NaN()})}, []string{"got NaN"}},
		{[]ratekitprom.Option{ratekitprom.WithConstLabels(prometheus.Labels{"policy": "x", "outcome": "y", "le": "z"})},
			[]string{`"le" is reserved`, `"outcome" is reserved`, `"policy" is reserved`}},
		{[]ratekitprom.Option{ratekitprom.WithConstLabels(prometheus.Labels{"__name": "x", "bad-name": "y", "ok": "\xff"})},
			[]string{`name "__name"`, `name "bad-name"`, `"ok" has a value that is not UTF-8`}},
		{[]ratekitprom.Option{ratekitprom.WithNamespace("a b"), ratekitprom.WithBuckets([]float64{2, 1})},
			[]string{`namespace "a b"`, "got 1 after 2"}},
	} {
		m, err := ratekitprom.New(c.opts...)
		if err == nil || m != nil {
			t.Errorf("%v: no error", c.want)
			continue
		}
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("error %q lacks %q", msg, w)
			}
		}
		for _, line := range strings.Split(msg, "\n") {
			if !strings.HasPrefix(line, "ratekit: ") || strings.Count(line, "ratekit: ") != 1 {
				t.Errorf("error line %q is not prefixed once with \"ratekit: \"", line)
			}
		}
		if n := strings.Count(msg, "\n") + 1; n != len(c.want) {
			t.Errorf("%d errors reported, want %d: %q", n, len(c.want), msg)
		}
	}
}

// TestOptionsAreValues: an option's slice or map can change after the
// option is built without changing what it configures.
func TestOptionsAreValues(t *testing.T) {
	bounds := []float64{0.01, 1}
	labels := prometheus.Labels{"service": "a"}
	opts := []ratekitprom.Option{ratekitprom.WithBuckets(bounds), ratekitprom.WithConstLabels(labels)}
	bounds[1], labels["service"] = 0, "b"
	m, reg := newMetrics(t, opts...)
	m.Observe(context.Background(), observe.Event{Policy: "api", Latency: time.Millisecond})
	got := values(t, reg)
	if got[`ratekit_decisions_total{outcome="allowed",policy="api",service="a"}`] != 1 {
		t.Fatalf("series: %v", got)
	}
}
