package ratekitprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekit/ratekit/observe"
)

// series are one policy's children of every vector, looked up once (the
// Metrics' policycache.Cache holds them): an Event then costs no label
// hashing and no allocation.
type series struct {
	decisions   [observe.Invalid + 1]prometheus.Counter // by Outcome
	nearLimit   prometheus.Counter
	storeErrors prometheus.Counter
	fallback    prometheus.Counter
	latency     prometheus.Observer
}
