// Package throttle logs the errors the kit's error policies handle, at most
// once per second, counting the rest.
package throttle

import (
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Log is a throttled slog warning. It is safe for concurrent use.
type Log struct {
	logger     *slog.Logger
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// New returns a Log writing to slog.Default().
func New() *Log { return &Log{logger: slog.Default()} }

// Error logs err for r (which may be nil) unless an error was logged less
// than a second ago; then it only counts it.
func (t *Log) Error(r *http.Request, err error) {
	path := ""
	if r != nil && r.URL != nil {
		path = r.URL.Path
	}
	t.mu.Lock()
	now := time.Now()
	if now.Sub(t.last) < time.Second {
		t.suppressed++
		t.mu.Unlock()
		return
	}
	n := t.suppressed
	t.last, t.suppressed = now, 0
	t.mu.Unlock()
	t.logger.Warn("ratekit: no rate-limit decision", "error", err, "path", path, "suppressed", n)
}
