package ratekitotel_test

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekit/ratekit/observe/observetest"
)

// TestNoSubjectInAttributes drives decisions about several subjects (IPs,
// an API key, a lockout account; allowed, denied, store error, invalid) and
// finds the exact data points, and no subject in any attribute of any data
// point, exemplar, scope or resource.
func TestNoSubjectInAttributes(t *testing.T) {
	m, reader := newMetrics(t)
	check(t, reader, observetest.DriveSubjects(t, m))

	var texts []string
	sets := func(s ...attribute.Set) {
		for _, set := range s {
			for _, kv := range set.ToSlice() {
				texts = append(texts, string(kv.Key)+"="+kv.Value.Emit())
			}
		}
	}
	rm := collect(t, reader)
	sets(*rm.Resource.Set())
	for _, sm := range rm.ScopeMetrics {
		sets(sm.Scope.Attributes)
		texts = append(texts, sm.Scope.Name)
		for _, im := range sm.Metrics {
			switch d := im.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sets(p.Attributes)
					for _, x := range p.Exemplars {
						texts = append(texts, fmt.Sprint(x.FilteredAttributes))
					}
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					sets(p.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					sets(p.Attributes)
					for _, x := range p.Exemplars {
						texts = append(texts, fmt.Sprint(x.FilteredAttributes))
					}
				}
			}
		}
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "ratekit.policy=keyed") {
		t.Fatalf("the scan saw no data point attributes: %q", all)
	}
	for _, s := range observetest.Subjects {
		if strings.Contains(all, s) {
			t.Errorf("the subject %q appears in the collected metrics", s)
		}
	}
}
