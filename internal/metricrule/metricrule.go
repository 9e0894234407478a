// Package metricrule holds the rules by which the metrics modules
// (observe/prometheus, observe/otel) turn an observe.Event into moves of
// their series, so that both count alike.
package metricrule

import "github.com/ratekit/ratekit/observe"

// FallbackActive reports what e does to the fallback-active gauge. A
// decision made by a store (allowed, denied, shadow_denied) sets it (set is
// true): to 1 when a fallback store made it, else to 0. A store error, an
// invalid request or an outcome this version does not know decides nothing
// and leaves the gauge as it was (set is false).
func FallbackActive(e observe.Event) (value int64, set bool) {
	switch e.Outcome {
	case observe.Allowed, observe.Denied, observe.ShadowDenied:
		if e.Fallback {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
