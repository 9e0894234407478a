package fallback

import "github.com/ratekit/ratekit"

// scaled returns limits at one instance's share of n (Limit.Share), or
// limits when n is 1.
func scaled(limits []ratekit.Limit, n int64) []ratekit.Limit {
	if n == 1 {
		return limits
	}
	out := make([]ratekit.Limit, len(limits))
	for i, l := range limits {
		out[i] = l.Share(n)
	}
	return out
}
