package ratekit

import (
	"testing"
	"time"
)

// TestPolicyOmitsZeroWindow: RateLimit-Policy writes w only as a positive
// integer, as the IETF draft requires; a limit with no window in seconds
// (here the zero Limit) has q alone.
func TestPolicyOmitsZeroWindow(t *testing.T) {
	for _, c := range []struct {
		limits []Limit
		want   string
	}{
		{[]Limit{FixedWindow(5, time.Minute).Named("api")}, `"api";q=5;w=60`},
		{[]Limit{{}}, `"";q=0`},
		{[]Limit{GCRA(10, time.Second, 20).Named("burst"), {}}, `"burst";q=20;w=2, "";q=0`},
	} {
		if got := policyHeader(c.limits, nil); got != c.want {
			t.Errorf("policyHeader = %s, want %s", got, c.want)
		}
	}
}
