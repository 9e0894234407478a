package ratekitprom_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ratekit/ratekit"
	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
)

// failingStore fails every call, as a Redis that is down would.
type failingStore struct{}

var errDown = errors.New("ratekit: test store is down")

func (failingStore) Take(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (failingStore) Peek(context.Context, string, []ratekit.Limit) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
func (failingStore) Reset(context.Context, string, []ratekit.Limit) error { return errDown }

// fallbackStore marks every decision of a working store as a fallback
// store's, as store/fallback does while the primary store is down.
type fallbackStore struct{ ratekit.Store }

func (s fallbackStore) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	d, err := s.Store.Take(ctx, key, limits, cost)
	d.Fallback = true
	return d, err
}

// newMetrics returns Metrics registered with a registry of their own.
func newMetrics(t testing.TB, opts ...ratekitprom.Option) (*ratekitprom.Metrics, *prometheus.Registry) {
	t.Helper()
	m, err := ratekitprom.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// values gathers reg: every counter and gauge by its series, as in the
// exposition format (name{label="value",...}, labels sorted), and every
// histogram's count as name_count{...}. It checks that each histogram's
// buckets add up to its count.
func values(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			suffix := "{" + strings.Join(labels, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				got[f.GetName()+suffix] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				got[f.GetName()+suffix] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				got[f.GetName()+"_count"+suffix] = float64(h.GetSampleCount())
				checkBuckets(t, f.GetName()+suffix, h)
			default:
				t.Fatalf("unexpected metric type %v of %s", f.GetType(), f.GetName())
			}
		}
	}
	return got
}

// checkBuckets: cumulative counts never fall and end at the sample count;
// a histogram with samples has a positive sum.
func checkBuckets(t *testing.T, name string, h *dto.Histogram) {
	t.Helper()
	var prev uint64
	for _, b := range h.GetBucket() {
		if b.GetCumulativeCount() < prev {
			t.Fatalf("%s: bucket %g holds %d, below the previous %d", name, b.GetUpperBound(), b.GetCumulativeCount(), prev)
		}
		prev = b.GetCumulativeCount()
	}
	if prev > h.GetSampleCount() || (h.GetSampleCount() > 0) != (h.GetSampleSum() > 0) {
		t.Fatalf("%s: buckets reach %d of %d samples, sum %g", name, prev, h.GetSampleCount(), h.GetSampleSum())
	}
}

// counts are what one policy's series should read.
type counts struct {
	allowed, denied, shadowDenied, errors, invalid int
	near, fallback, latency                        int
}

// policy returns the series of one policy as values reports them: every
// outcome and counter, zeros included, since a policy's series all appear
// on its first decision.
func policy(name string, c counts) map[string]float64 {
	l := fmt.Sprintf("{policy=%q}", name)
	out := map[string]float64{
		"ratekit_near_limit_total" + l:            float64(c.near),
		"ratekit_store_errors_total" + l:          float64(c.errors),
		"ratekit_fallback_decisions_total" + l:    float64(c.fallback),
		"ratekit_store_latency_seconds_count" + l: float64(c.latency),
	}
	for outcome, n := range map[string]int{"allowed": c.allowed, "denied": c.denied,
		"shadow_denied": c.shadowDenied, "error": c.errors, "invalid": c.invalid} {
		out[fmt.Sprintf("ratekit_decisions_total{outcome=%q,policy=%q}", outcome, name)] = float64(n)
	}
	return out
}

// want merges the series of several policies with the fallback gauge.
func want(active float64, policies ...map[string]float64) map[string]float64 {
	out := map[string]float64{"ratekit_fallback_active{}": active}
	for _, p := range policies {
		maps.Copy(out, p)
	}
	return out
}

// check compares every series of reg with w.
func check(t *testing.T, reg prometheus.Gatherer, w map[string]float64) {
	t.Helper()
	got := values(t, reg)
	for k, v := range w {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present: %v), want %v", k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := w[k]; !ok {
			t.Errorf("unexpected series %s = %v", k, v)
		}
	}
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})

// send makes n requests to h from the test client 192.0.2.1 and returns
// how many got each status.
func send(h http.Handler, n int, prepare ...func(*http.Request)) map[int]int {
	statuses := map[int]int{}
	for range n {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, p := range prepare {
			p(req)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		statuses[rec.Code]++
	}
	return statuses
}

// limiter builds a Limiter or fails the test.
func limiter(t *testing.T, s ratekit.Store, limits ...ratekit.Limit) *ratekit.Limiter {
	t.Helper()
	l, err := ratekit.New(s, limits...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type dtoLabel = dto.LabelPair
