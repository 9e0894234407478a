package integration_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit/observe"
)

// load sends HTTP requests from concurrent workers, each on a subject of the
// current phase ("<phase>-<n>"), and records every response and, through its
// observer, every decision.
type load struct {
	t        *testing.T
	url      string
	subjects int
	client   *http.Client
	phase    atomic.Pointer[string]
	stop     chan struct{}
	wg       sync.WaitGroup

	mu       sync.Mutex
	events   []loadEvent
	requests []loadRequest
	failures []string // transport errors, and statuses other than 200 and 429
}

// loadEvent is one decision, as the middleware's observer saw it.
type loadEvent struct {
	subject  string
	start    time.Time // when the store was asked
	latency  time.Duration
	outcome  observe.Outcome
	fallback bool
}

// loadRequest is one HTTP request, as a worker saw it.
type loadRequest struct {
	phase   string
	start   time.Time
	status  int
	latency time.Duration
}

// newLoad returns a load whose observer must be given to the middleware
// before start is called.
func newLoad(t *testing.T, subjects int) *load {
	l := &load{t: t, subjects: subjects, stop: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}}
	l.setPhase("idle")
	return l
}

// observer records decisions.
func (l *load) observer() observe.Observer {
	return observe.Func(func(_ context.Context, e observe.Event) {
		ev := loadEvent{subject: e.Subject, start: time.Now().Add(-e.Latency), latency: e.Latency, outcome: e.Outcome, fallback: e.Fallback}
		l.mu.Lock()
		l.events = append(l.events, ev)
		l.mu.Unlock()
	})
}

func (l *load) setPhase(p string) { l.phase.Store(&p) }

// start runs workers against url until finish.
func (l *load) start(url string, workers int) {
	l.url = url
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := w; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				phase := *l.phase.Load()
				l.send(phase, phase+"-"+strconv.Itoa(i%l.subjects))
			}
		}()
	}
	l.t.Cleanup(l.finish)
}

func (l *load) send(phase, subject string) {
	req, _ := http.NewRequest("GET", l.url, nil)
	req.Header.Set("X-Subject", subject)
	start := time.Now()
	res, err := l.client.Do(req)
	var status int
	if err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		status = res.StatusCode
	}
	elapsed := time.Since(start)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, loadRequest{phase, start, status, elapsed})
	switch {
	case err != nil:
		l.failures = append(l.failures, fmt.Sprintf("%s: %v", subject, err))
	case status != 200 && status != 429:
		l.failures = append(l.failures, fmt.Sprintf("%s: status %d", subject, status))
	}
}

// finish stops the workers and waits for them; it may be called again.
func (l *load) finish() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// waitUntil polls cond every 5 ms until it holds, failing the test after
// limit: a wait for the workers' progress, never for a race to settle.
func (l *load) waitUntil(what string, limit time.Duration, cond func() bool) time.Time {
	l.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			l.t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Now()
}

// matching returns the recorded decisions for which keep is true.
func (l *load) matching(keep func(e loadEvent) bool) []loadEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []loadEvent
	for _, e := range l.events {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// inPhase keeps the decisions about a phase's subjects.
func inPhase(phase string) func(e loadEvent) bool {
	return func(e loadEvent) bool { return len(e.subject) > len(phase) && e.subject[:len(phase)+1] == phase+"-" }
}

// bothOf keeps the decisions both filters keep.
func bothOf(a, b func(e loadEvent) bool) func(e loadEvent) bool {
	return func(e loadEvent) bool { return a(e) && b(e) }
}

func fromLocal(e loadEvent) bool { return e.fallback }
func fromRedis(e loadEvent) bool { return !e.fallback && e.outcome != observe.Error }

// subjectTally counts decisions and admissions per subject.
type subjectTally struct{ decisions, admitted int }

func perSubject(events []loadEvent) map[string]subjectTally {
	m := map[string]subjectTally{}
	for _, e := range events {
		c := m[e.subject]
		c.decisions++
		if e.outcome == observe.Allowed {
			c.admitted++
		}
		m[e.subject] = c
	}
	return m
}

// everySubjectHas reports whether each of a phase's subjects has at least n
// decisions that keep keeps.
func (l *load) everySubjectHas(phase string, n int, keep func(e loadEvent) bool) func() bool {
	return func() bool {
		counts := perSubject(l.matching(bothOf(inPhase(phase), keep)))
		if len(counts) < l.subjects {
			return false
		}
		for _, c := range counts {
			if c.decisions < n {
				return false
			}
		}
		return true
	}
}

// latencyStats are the latency figures of a set of calls.
type latencyStats struct {
	n             int
	p50, p99, max time.Duration
}

func latencyOf(ds []time.Duration) latencyStats {
	if len(ds) == 0 {
		return latencyStats{}
	}
	slices.Sort(ds)
	return latencyStats{n: len(ds), p50: ds[len(ds)/2], p99: ds[(len(ds)*99)/100], max: ds[len(ds)-1]}
}

func (s latencyStats) String() string {
	return fmt.Sprintf("p50 %v, p99 %v, max %v over %d", s.p50.Round(time.Microsecond), s.p99.Round(time.Microsecond),
		s.max.Round(time.Microsecond), s.n)
}

// decisionLatency is the latency of the store calls among events.
func decisionLatency(events []loadEvent) latencyStats {
	ds := make([]time.Duration, len(events))
	for i, e := range events {
		ds[i] = e.latency
	}
	return latencyOf(ds)
}

// httpLatency is the latency of a phase's HTTP requests sent in [from, to).
func (l *load) httpLatency(phase string, from, to time.Time) latencyStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ds []time.Duration
	for _, r := range l.requests {
		if r.phase == phase && !r.start.Before(from) && r.start.Before(to) {
			ds = append(ds, r.latency)
		}
	}
	return latencyOf(ds)
}
