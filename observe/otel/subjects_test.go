package ratekitotel_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestNoSubjectInAttributes drives decisions about several subjects (IPs,
// an API key, a lockout account; allowed, denied, store error, invalid) and
// finds the exact data points, and no subject in any attribute of any data
// point, exemplar, scope or resource.
func TestNoSubjectInAttributes(t *testing.T) {
	m, reader := newMetrics(t)
	opt := ratekit.WithObserver(m)
	store := memstore.New()
	api := ratekit.Middleware(limiter(t, store, ratekit.FixedWindow(1, time.Minute).Named("api")), ratekit.ByIP(), opt)(okHandler)
	keyed := ratekit.Middleware(limiter(t, store, ratekit.FixedWindow(5, time.Minute).Named("keyed")), ratekit.ByHeader("X-Api-Key"), opt)(okHandler)
	broken := ratekit.Middleware(limiter(t, failingStore{}, ratekit.FixedWindow(5, time.Minute).Named("down")), ratekit.ByIP(), opt)(okHandler)
	send(api, 2)                                                                 // 192.0.2.1: allowed, denied
	send(api, 1, func(r *http.Request) { r.RemoteAddr = "203.0.113.9:4000" })    // allowed
	send(keyed, 1, func(r *http.Request) { r.Header.Set("X-Api-Key", "alice") }) // allowed
	send(keyed, 1)                                                               // invalid: no key
	send(broken, 1)                                                              // error
	lo, err := lockout.New(store, lockout.Config{Name: "login", Observer: m,
		Windows: []lockout.Window{{Scope: "temp", Attempts: 1, Window: time.Minute, Block: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, _ = lo.Attempt(context.Background(), "bob@example.com") // allowed, denied
	}

	check(t, reader, want(0,
		policy("api", counts{allowed: 2, denied: 1, near: 2, latency: 3}),
		policy("keyed", counts{allowed: 1, invalid: 1, latency: 1}),
		policy("down", counts{errors: 1, latency: 1}),
		policy("login", counts{allowed: 1, denied: 1, near: 1, latency: 2})))

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
	for _, s := range []string{"192.0.2.1", "203.0.113.9", "alice", "bob@example.com"} {
		if strings.Contains(all, s) {
			t.Errorf("the subject %q appears in the collected metrics", s)
		}
	}
}

// TestConcurrentObserve: goroutines recording at once, some of them about
// policies not seen before, lose no count (run with -race).
func TestConcurrentObserve(t *testing.T) {
	m, reader := newMetrics(t)
	const workers, each, nPolicies = 8, 500, 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				m.Observe(context.Background(), observe.Event{
					Outcome: observe.Outcome(i % 2), // allowed, denied
					Policy:  fmt.Sprintf("p%d", (w+i)%nPolicies),
					Quota:   10, Remaining: 0, Latency: time.Microsecond,
				})
			}
		}()
	}
	wg.Wait()
	// Each policy gets workers*each/nPolicies events. A worker gives a
	// policy one outcome (i's parity is fixed by (w+i)%4); half the workers
	// give it allowed, half denied.
	per := workers * each / nPolicies
	var ps []map[string]float64
	for p := range nPolicies {
		ps = append(ps, policy(fmt.Sprintf("p%d", p), counts{allowed: per / 2, denied: per / 2, near: per / 2, latency: per}))
	}
	check(t, reader, want(0, ps...))
}
