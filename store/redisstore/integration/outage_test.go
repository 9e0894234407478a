package integration_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/redisstore"
)

// The load of the outage tests: 16 workers over 8 subjects per phase, a
// quota of 40 per subject per window (an hour, so that no window ends during
// a run) shared by 2 instances: 20 per subject on this one while falling
// back.
const (
	outageWorkers  = 16
	outageSubjects = 8
	outageQuota    = 40
	outageShare    = outageQuota / 2
)

// An outage takes a private redis-server down and brings it back.
type outage struct {
	name     string
	down, up func(*redistest.PrivateServer) error
}

var (
	killed = outage{"killed", (*redistest.PrivateServer).Kill, (*redistest.PrivateServer).Restart} // SIGKILL; a new process on the same port
	frozen = outage{"frozen", (*redistest.PrivateServer).Freeze, (*redistest.PrivateServer).Thaw}  // SIGSTOP; SIGCONT
)

// outageRig is a private Redis, a limiter on it, and the HTTP load against
// the limiter's middleware.
type outageRig struct {
	srv         *redistest.PrivateServer
	load        *load
	started     time.Time    // when the load started
	storeErrors atomic.Int64 // errors that reached the middleware's error policy
}

// newOutageRig starts a private Redis and the load against a limiter on the
// store that wrap makes of the Redis store (the Redis store itself, or a
// fallback over it). The client has redisstore.ClientOptions, with a pool of
// pool connections when pool > 0, and hook when it is not nil. It returns
// when each base subject has had 250 decisions from Redis.
func newOutageRig(t *testing.T, pool int, hook redis.Hook, wrap func(*redisstore.Store) ratekit.Store) *outageRig {
	t.Helper()
	r := &outageRig{srv: redistest.Private(t), load: newLoad(t, outageSubjects)}
	opts := redisstore.ClientOptions(r.srv.Addr)
	if pool > 0 {
		opts.PoolSize = pool
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	if hook != nil {
		client.AddHook(hook)
	}
	rs, err := redisstore.New(client, redisstore.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	limiter, err := ratekit.New(wrap(rs), ratekit.FixedWindow(outageQuota, time.Hour).Named("api"))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, limiter, ratekit.ByHeader("X-Subject"), ratekit.WithObserver(r.load.observer()),
		ratekit.WithErrorHandler(func(*http.Request, error) { r.storeErrors.Add(1) }))
	r.load.setPhase("base")
	r.started = time.Now()
	r.load.start(srv.URL, outageWorkers)
	r.load.waitUntil("baseline load", time.Minute, r.load.everySubjectHas("base", 250, fromRedis))
	return r
}

// takeDown runs o.down and returns when it was called.
func (r *outageRig) takeDown(t *testing.T, o outage) time.Time {
	t.Helper()
	at := time.Now()
	if err := o.down(r.srv); err != nil {
		t.Fatal(err)
	}
	return at
}

// bringBack runs o.up and returns when it was called: for a restart, before
// the new process started, so that the time it takes to start counts
// against the recovery.
func (r *outageRig) bringBack(t *testing.T, o outage) time.Time {
	t.Helper()
	at := time.Now()
	if err := o.up(r.srv); err != nil {
		t.Fatal(err)
	}
	return at
}

// firstRedisDecision returns when the first decision Redis made about a
// request that came after since ended, or the zero time.
func (r *outageRig) firstRedisDecision(since time.Time) time.Time {
	var first time.Time
	for _, e := range r.load.matching(func(e loadEvent) bool { return fromRedis(e) && !e.start.Before(since) }) {
		if end := e.start.Add(e.latency); first.IsZero() || end.Before(first) {
			first = end
		}
	}
	return first
}

// checkNoFailure fails the test if a request failed or a store error reached
// the middleware.
func (r *outageRig) checkNoFailure(t *testing.T) {
	t.Helper()
	r.load.mu.Lock()
	failures, n := r.load.failures, len(r.load.requests)
	r.load.mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("%d of %d requests failed, e.g. %s", len(failures), n, failures[0])
	}
	if errs := r.storeErrors.Load(); errs != 0 {
		t.Fatalf("%d store errors reached the middleware", errs)
	}
	if errs := r.load.matching(func(e loadEvent) bool { return e.outcome == observe.Error }); len(errs) > 0 {
		t.Fatalf("%d decisions were errors", len(errs))
	}
}

// checkAdmitted fails the test unless every subject of phase had exactly
// want of its decisions that keep keeps admitted.
func (r *outageRig) checkAdmitted(t *testing.T, phase string, keep func(loadEvent) bool, want int) {
	t.Helper()
	counts := perSubject(r.load.matching(bothOf(inPhase(phase), keep)))
	if len(counts) != outageSubjects {
		t.Fatalf("%s: %d subjects decided, want %d", phase, len(counts), outageSubjects)
	}
	for subject, c := range counts {
		if c.admitted != want {
			t.Fatalf("%s: %d of %d admitted, want exactly %d", subject, c.admitted, c.decisions, want)
		}
	}
}
