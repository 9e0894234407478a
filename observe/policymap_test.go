package observe_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratekit/ratekit/observe"
)

type value struct{ policy string }

// TestGetBuildsOnce: goroutines asking at once for policies not seen
// before get, per policy, the one value built for it, built once (run with
// -race).
func TestGetBuildsOnce(t *testing.T) {
	var builds atomic.Int64
	c := observe.NewPolicyMap(func(policy string) *value {
		builds.Add(1)
		return &value{policy}
	})
	const workers, each, nPolicies = 8, 200, 5
	got := make([][]*value, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				got[w] = append(got[w], c.Get(fmt.Sprintf("p%d", (w+i)%nPolicies)))
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != nPolicies {
		t.Fatalf("%d builds, want one per policy (%d)", n, nPolicies)
	}
	for w := range workers {
		for i, v := range got[w] {
			name := fmt.Sprintf("p%d", (w+i)%nPolicies)
			if v.policy != name || v != c.Get(name) {
				t.Fatalf("worker %d, call %d: got the value of %q, want the one of %q", w, i, v.policy, name)
			}
		}
	}
}

// TestGetDoesNotAllocate: a policy already seen costs no allocation.
func TestGetDoesNotAllocate(t *testing.T) {
	c := observe.NewPolicyMap(func(policy string) *value { return &value{policy} })
	c.Get("api")
	c.Get("login")
	if n := testing.AllocsPerRun(100, func() { c.Get("api") }); n != 0 {
		t.Fatalf("Get allocates %v times", n)
	}
}

func TestFallbackActive(t *testing.T) {
	for _, c := range []struct {
		outcome  observe.Outcome
		fallback bool
		value    int64
		set      bool
	}{
		{observe.Allowed, false, 0, true},
		{observe.Allowed, true, 1, true},
		{observe.Denied, false, 0, true},
		{observe.Denied, true, 1, true},
		{observe.ShadowDenied, false, 0, true},
		{observe.ShadowDenied, true, 1, true},
		{observe.Error, false, 0, false},
		{observe.Error, true, 0, false},
		{observe.Invalid, false, 0, false},
		{observe.Invalid, true, 0, false},
		{99, true, 0, false},
	} {
		v, set := observe.Event{Outcome: c.outcome, Fallback: c.fallback}.FallbackActive()
		if v != c.value || set != c.set {
			t.Errorf("%v, fallback %v: (%d, %v), want (%d, %v)", c.outcome, c.fallback, v, set, c.value, c.set)
		}
	}
}
