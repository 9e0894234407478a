package metricrule_test

import (
	"testing"

	"github.com/ratekit/ratekit/internal/metricrule"
	"github.com/ratekit/ratekit/observe"
)

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
		v, set := metricrule.FallbackActive(observe.Event{Outcome: c.outcome, Fallback: c.fallback})
		if v != c.value || set != c.set {
			t.Errorf("%v, fallback %v: (%d, %v), want (%d, %v)", c.outcome, c.fallback, v, set, c.value, c.set)
		}
	}
}
