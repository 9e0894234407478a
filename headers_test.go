package ratekit_test

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

func TestPolicyQuota(t *testing.T) {
	cases := []struct {
		limit ratekit.Limit
		q, w  int64
	}{
		{ratekit.FixedWindow(100, time.Minute), 100, 60},
		{ratekit.FixedWindow(10, 100*time.Millisecond), 100, 1},
		{ratekit.FixedWindow(3, 1500*time.Millisecond), 6, 3},
		{ratekit.FixedWindow(1, 1001*time.Millisecond), 1000, 1001},
		{ratekit.FixedWindow(1, 1234*time.Millisecond), 500, 617}, // 1.234 s = 617/500 s
		{ratekit.GCRA(1, time.Second, 20), 20, 20},                // 20 per the 20 s the burst takes to refill
		{ratekit.GCRA(10, time.Second, 5), 10, 1},                 // 5 per 500 ms is 10 per second
		{ratekit.GCRA(100, time.Minute, 20), 20, 12},              // interval 600 ms
		{ratekit.GCRA(5.5, time.Second, 11), 11, 3},               // 11 × 181819 µs = 2.000009 s: no factor ≤ 1000 makes it whole
		{ratekit.GCRA(1.003, 366*24*time.Hour, 1), 1, 31527817},   // interval 31527816.550349 s: rounded up
	}
	for _, tc := range cases {
		if err := tc.limit.Validate(); err != nil {
			t.Fatal(err)
		}
		q, w := ratekit.PolicyQuota(tc.limit)
		if q != tc.q || w != tc.w {
			t.Errorf("%v: q=%d w=%d, want q=%d w=%d", tc.limit, q, w, tc.q, tc.w)
		}
	}
}
