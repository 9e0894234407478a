package integration_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

// Bounds of the fallback's outage tests, generous for -race on a loaded
// 2-core machine (a whole second test run beside this one made a decision
// from memory take 8 ms at p99) and still far below what they guard
// against (a hung Redis's 100 ms per call; a recovery noticed a second
// late).
const (
	openAddedP99 = 20 * time.Millisecond // p99 of a decision while the breaker is open
	resumeWithin = time.Second           // from Redis back to its first decision
)

// TestFallbackRedisKilled runs HTTP load through a fallback store (Redis,
// and memstore with 2 instances' shares) while redis-server is killed
// (SIGKILL) and restarted on the same port. No request fails and no store
// error reaches the middleware; once the breaker is open, decisions take at
// most 20 ms at p99; locally every subject gets exactly its share, 20 of 40;
// Redis decides again within 1 s of the restart, counted from the moment the
// new process was started.
func TestFallbackRedisKilled(t *testing.T) { testFallbackOutage(t, killed) }

// TestFallbackRedisFrozen is TestFallbackRedisKilled with a hung Redis
// (SIGSTOP, then SIGCONT): every call to it waits for the middleware's
// timeout until the breaker opens.
func TestFallbackRedisFrozen(t *testing.T) { testFallbackOutage(t, frozen) }

// withFallback wraps the Redis store as the outage tests do: 2 instances,
// the default breaker.
func withFallback(t *testing.T, fb **fallback.Store) func(*redisstore.Store) ratekit.Store {
	return func(rs *redisstore.Store) ratekit.Store {
		local := memstore.New()
		t.Cleanup(func() { local.Close() })
		s, err := fallback.New(rs, local, fallback.Config{Instances: 2})
		if err != nil {
			t.Fatal(err)
		}
		*fb = s
		return s
	}
}

func testFallbackOutage(t *testing.T, o outage) {
	var fb *fallback.Store
	r := newOutageRig(t, 0, nil, withFallback(t, &fb))
	ld := r.load

	downAt := r.takeDown(t, o) // the workers go on with the base subjects
	openAt := ld.waitUntil("breaker open", 10*time.Second, fb.Open)
	ld.setPhase("down") // new subjects, decided only while the breaker is open
	ld.waitUntil("load while open", time.Minute, ld.everySubjectHas("down", 300, fromLocal))

	upAt := r.bringBack(t, o)
	ld.waitUntil("Redis deciding again", 10*time.Second, func() bool {
		return !fb.Open() && !r.firstRedisDecision(upAt).IsZero()
	})
	resumed := r.firstRedisDecision(upAt)
	ld.setPhase("back")
	ld.waitUntil("load after", time.Minute, ld.everySubjectHas("back", 60, fromRedis))
	ld.finish()

	r.checkNoFailure(t)
	base := ld.matching(bothOf(inPhase("base"), func(e loadEvent) bool { return e.start.Add(e.latency).Before(downAt) }))
	transition := ld.matching(bothOf(inPhase("base"), fromLocal))
	open := ld.matching(bothOf(inPhase("down"), fromLocal))
	baseStats, openStats := decisionLatency(base), decisionLatency(open)
	t.Logf("%s Redis, fallback with 2 instances, %d workers, 0 of %d requests failed:", o.name, outageWorkers, len(ld.requests))
	t.Logf("  decisions before (Redis):  %v", baseStats)
	t.Logf("  decisions while Redis was down and the breaker closed (%v): %v",
		openAt.Sub(downAt).Round(time.Millisecond), decisionLatency(transition))
	t.Logf("  decisions while open:      %v", openStats)
	httpBase, httpOpen := ld.httpLatency("base", r.started, downAt), ld.httpLatency("down", openAt, upAt)
	t.Logf("  HTTP before:               %v", httpBase)
	t.Logf("  HTTP while open:           %v", httpOpen)
	t.Logf("  Redis decides again %v after it was brought back", resumed.Sub(upAt).Round(time.Millisecond))

	for _, e := range base {
		// A healthy Redis that missed the timeout on a loaded machine is
		// answered locally, as it should be; any other local answer
		// before the outage is a fault.
		if e.fallback && e.latency < ratekit.DefaultTimeout {
			t.Fatalf("a decision before the outage was made locally without waiting for Redis's timeout: %+v", e)
		}
	}
	r.checkAdmitted(t, "base", func(e loadEvent) bool { return !e.fallback }, outageQuota)
	for subject, c := range perSubject(transition) {
		if c.admitted > outageShare {
			t.Fatalf("%s: %d admitted locally during the transition, want at most %d", subject, c.admitted, outageShare)
		}
	}
	r.checkAdmitted(t, "down", fromLocal, outageShare)
	if openStats.p99 > openAddedP99 {
		t.Fatalf("while open, decisions took %v at p99, want ≤ %v", openStats.p99, openAddedP99)
	}
	if httpOpen.p50 > httpBase.p50+openAddedP99 { // p50: HTTP's p99 is the machine's noise
		t.Fatalf("while open, HTTP requests took %v at p50, %v before: more than %v added", httpOpen.p50, httpBase.p50, openAddedP99)
	}
	if d := resumed.Sub(upAt); d > resumeWithin {
		t.Fatalf("Redis decided again %v after it was brought back, want ≤ %v", d, resumeWithin)
	}
	r.checkAdmitted(t, "back", func(loadEvent) bool { return true }, outageQuota)
	if n := len(ld.matching(bothOf(inPhase("back"), fromLocal))); n > 0 {
		t.Fatalf("%d decisions after Redis came back were local", n)
	}
}

// TestFallbackBaselineWithoutFallback measures what the fallback replaces:
// the Redis store alone, failing open (the default) with the default 100 ms
// timeout. While Redis is down every request passes unlimited (so each
// subject gets more than its quota) and reports a store error; a frozen
// Redis costs every request the timeout.
func TestFallbackBaselineWithoutFallback(t *testing.T) {
	for _, o := range []outage{killed, frozen} {
		t.Run(o.name, func(t *testing.T) {
			r := newOutageRig(t, 0, nil, func(rs *redisstore.Store) ratekit.Store { return rs })
			ld := r.load
			downAt := r.takeDown(t, o)
			ld.setPhase("down")
			ld.waitUntil("load while down", time.Minute, ld.everySubjectHas("down", outageQuota+20, func(loadEvent) bool { return true }))
			upAt := r.bringBack(t, o)
			ld.waitUntil("Redis deciding again", 10*time.Second, func() bool { return !r.firstRedisDecision(upAt).IsZero() })
			resumed := r.firstRedisDecision(upAt)
			ld.finish()

			down := ld.matching(func(e loadEvent) bool { return inPhase("down")(e) && e.start.Add(e.latency).Before(upAt) })
			failed := ld.matching(func(e loadEvent) bool { return e.outcome == observe.Error })
			stats := decisionLatency(down)
			t.Logf("%s Redis, no fallback (fail open, 100 ms timeout), %d workers:", o.name, outageWorkers)
			t.Logf("  decisions before:     %v", decisionLatency(ld.matching(func(e loadEvent) bool { return e.start.Before(downAt) })))
			t.Logf("  decisions while down: %v; %d of %d passed unlimited on a store error",
				stats, len(failed), len(ld.matching(func(loadEvent) bool { return true })))
			t.Logf("  HTTP before:          %v", ld.httpLatency("base", r.started, downAt))
			t.Logf("  HTTP while down:      %v", ld.httpLatency("down", downAt, upAt))
			t.Logf("  Redis decides again %v after it was brought back", resumed.Sub(upAt).Round(time.Millisecond))

			if len(ld.failures) > 0 {
				t.Fatalf("%d requests failed, e.g. %s", len(ld.failures), ld.failures[0])
			}
			if n := r.storeErrors.Load(); n != int64(len(failed)) || n < int64(len(down)) {
				t.Fatalf("%d store errors reported, %d error decisions, %d decisions while down", n, len(failed), len(down))
			}
			for subject, c := range perSubject(down) {
				if c.admitted != 0 || c.decisions <= outageQuota {
					t.Fatalf("%s: %+v; want every one of more than %d requests let through on an error", subject, c, outageQuota)
				}
			}
			if o.name == "frozen" && stats.p50 < 90*time.Millisecond {
				t.Fatalf("frozen Redis, decisions took %v at p50; the timeout is 100 ms", stats.p50)
			}
		})
	}
}

// TestFallbackResumeAfterPoolGaveUp measures the recovery from a long
// outage. go-redis counts failed dials and, after PoolSize of them in a row,
// stops dialing for calls: a background goroutine dials once a second until
// one succeeds, and only then do calls get connections again. With
// redisstore.ClientOptions (PoolSize 128) and the breaker's probes (one
// failed dial per Retry, 250 ms) that takes about 30 s of outage; a pool of 4
// gets there in a second or two. Redis then decides again within go-redis's
// second plus Retry of its restart (bounded here by 2 s), not within 1 s.
func TestFallbackResumeAfterPoolGaveUp(t *testing.T) {
	const pool = 4
	var fb *fallback.Store
	dials := &dialWatch{}
	r := newOutageRig(t, pool, dials, withFallback(t, &fb))
	ld := r.load
	r.takeDown(t, killed)
	ld.waitUntil("breaker open", 10*time.Second, fb.Open)
	ld.setPhase("down")
	ld.waitUntil("go-redis gives up dialing", time.Minute, dials.gaveUp.Load)
	upAt := r.bringBack(t, killed)
	ld.waitUntil("Redis deciding again", 10*time.Second, func() bool {
		return !fb.Open() && !r.firstRedisDecision(upAt).IsZero()
	})
	resumed := r.firstRedisDecision(upAt).Sub(upAt)
	ld.finish()

	r.checkNoFailure(t)
	t.Logf("killed Redis, a pool of %d that gave up dialing: Redis decides again %v after it was brought back",
		pool, resumed.Round(time.Millisecond))
	if resumed > 2*time.Second {
		t.Fatalf("Redis decided again %v after it was brought back, want ≤ 2s (go-redis's 1 s + Retry)", resumed)
	}
}

// dialWatch is a go-redis hook that finds out when a pool has given up
// dialing for calls. Until then a failed dial is 5 attempts 100 ms apart,
// and the breaker's probes start one every 250 ms; after, one attempt a
// second is made in the background. A failed attempt 900 ms or more after
// the one before is that.
type dialWatch struct {
	mu     sync.Mutex
	last   time.Time // the last failed attempt
	gaveUp atomic.Bool
}

func (h *dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			h.mu.Lock()
			if now := time.Now(); !h.last.IsZero() && now.Sub(h.last) >= 900*time.Millisecond {
				h.gaveUp.Store(true)
			} else {
				h.last = now
			}
			h.mu.Unlock()
		}
		return c, err
	}
}

func (h *dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
