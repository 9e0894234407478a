package ratekitotel_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekit/ratekit"
	ratekitotel "github.com/ratekit/ratekit/observe/otel"
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

// newMetrics returns Metrics on an SDK MeterProvider of their own, read by
// the returned ManualReader.
func newMetrics(t testing.TB, opts ...ratekitotel.Option) (*ratekitotel.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := ratekitotel.New(append([]ratekitotel.Option{ratekitotel.WithMeterProvider(mp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m, r
}

// collect reads r once.
func collect(t *testing.T, r *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// values collects r: every counter and gauge data point by instrument name
// and attributes (name{k=v,...}, keys sorted), every histogram's count as
// name_count{...}. It checks that each histogram's buckets add up to its
// count, and that every attribute is one of the two the package documents.
func values(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	key := func(name string, set attribute.Set) string {
		var kvs []string
		for _, kv := range set.ToSlice() {
			if kv.Key != ratekitotel.PolicyKey && kv.Key != ratekitotel.OutcomeKey {
				t.Errorf("%s: unexpected attribute %s", name, kv.Key)
			}
			kvs = append(kvs, string(kv.Key)+"="+kv.Value.Emit())
		}
		return name + "{" + strings.Join(kvs, ",") + "}"
	}
	for _, sm := range collect(t, r).ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[key(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					got[key(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					var n uint64
					for _, c := range p.BucketCounts {
						n += c
					}
					if n != p.Count || (p.Count > 0) != (p.Sum > 0) {
						t.Errorf("%s: buckets hold %d of %d samples, sum %g", m.Name, n, p.Count, p.Sum)
					}
					got[key(m.Name+"_count", p.Attributes)] = float64(p.Count)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return got
}

// counts are what one policy's data points should read.
type counts struct {
	allowed, denied, shadowDenied, errors, invalid int
	near, fallback, latency                        int
}

// policy returns the data points of one policy that have been recorded:
// an OpenTelemetry instrument has a data point per attribute set measured,
// so zeros are absent.
func policy(name string, c counts) map[string]float64 {
	out := map[string]float64{}
	add := func(k string, n int) {
		if n > 0 {
			out[k] = float64(n)
		}
	}
	p := "ratekit.policy=" + name
	add("ratekit.near_limit{"+p+"}", c.near)
	add("ratekit.store.errors{"+p+"}", c.errors)
	add("ratekit.fallback.decisions{"+p+"}", c.fallback)
	add("ratekit.store.latency_count{"+p+"}", c.latency)
	for outcome, n := range map[string]int{"allowed": c.allowed, "denied": c.denied,
		"shadow_denied": c.shadowDenied, "error": c.errors, "invalid": c.invalid} {
		add(fmt.Sprintf("ratekit.decisions{ratekit.outcome=%s,%s}", outcome, p), n)
	}
	return out
}

// want merges the data points of several policies with the fallback gauge.
func want(active float64, policies ...map[string]float64) map[string]float64 {
	out := map[string]float64{"ratekit.fallback.active{}": active}
	for _, p := range policies {
		maps.Copy(out, p)
	}
	return out
}

// check compares every data point r collects with w.
func check(t *testing.T, r *sdkmetric.ManualReader, w map[string]float64) {
	t.Helper()
	got := values(t, r)
	for k, v := range w {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present: %v), want %v", k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := w[k]; !ok {
			t.Errorf("unexpected data point %s = %v", k, v)
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
