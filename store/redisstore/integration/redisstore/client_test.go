package redisstore_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// margin is what a call may take beyond its context's deadline.
const margin = 50 * time.Millisecond

// TestNewChecksContextTimeout: New rejects every go-redis client type whose
// options leave ContextTimeoutEnabled false, also behind a
// redis.UniversalClient, and says how to fix it; with the option set, each is
// accepted. A type the store cannot inspect is accepted as it is.
func TestNewChecksContextTimeout(t *testing.T) {
	srv := redistest.RealStandalone(t)
	cluster := redistest.StartCluster(t)
	ring := func(enabled bool) *redis.Ring {
		return redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"one": srv.Addr}, ContextTimeoutEnabled: enabled})
	}
	universal := func(enabled bool) redis.UniversalClient {
		return redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr}, ContextTimeoutEnabled: enabled})
	}
	cases := []struct {
		name     string
		typ      string
		disabled redis.UniversalClient
		enabled  redis.UniversalClient
	}{
		{"client", "*redis.Client", srv.NewClientAsGiven(nil), srv.NewClient(nil)},
		{"cluster", "*redis.ClusterClient", cluster.NewClientAsGiven(nil), cluster.NewClient(nil)},
		{"ring", "*redis.Ring", ring(false), ring(true)},
		{"universal", "*redis.Client", universal(false), universal(true)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() { tc.disabled.Close(); tc.enabled.Close() })
			_, err := redisstore.New(tc.disabled)
			if err == nil {
				t.Fatal("a client without ContextTimeoutEnabled was accepted")
			}
			msg := err.Error()
			for _, want := range []string{"ContextTimeoutEnabled", "set ContextTimeoutEnabled: true", tc.typ} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if !strings.HasPrefix(msg, "ratekit: redisstore: ") || strings.Count(msg, "ratekit: ") != 1 {
				t.Errorf("error %q does not start with exactly one \"ratekit: redisstore: \"", msg)
			}
			if _, err := redisstore.New(tc.enabled); err != nil {
				t.Errorf("a client with ContextTimeoutEnabled was rejected: %v", err)
			}
		})
	}
	t.Run("opaque", func(t *testing.T) {
		c := srv.NewClientAsGiven(nil)
		t.Cleanup(func() { c.Close() })
		if _, err := redisstore.New(opaque{c}); err != nil {
			t.Fatalf("a client type the store cannot inspect was rejected: %v", err)
		}
	})
}

// opaque is a client type the store does not know.
type opaque struct{ *redis.Client }

// TestPing: Ping answers nil where Redis answers, on every deployment.
func TestPing(t *testing.T) {
	ctx := context.Background()
	targets(t, func(t *testing.T, tg target) {
		c := tg.newClient()
		t.Cleanup(func() { c.Close() })
		if err := newStore(t, c, redistest.Prefix(t)).Ping(ctx); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
	t.Run("ring", func(t *testing.T) {
		srv := redistest.Standalone(t)
		r := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"one": srv.Addr}, ContextTimeoutEnabled: true})
		t.Cleanup(func() { r.Close() })
		if err := newStore(t, r, redistest.Prefix(t)).Ping(ctx); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
	t.Run("opaque", func(t *testing.T) {
		c := redistest.Standalone(t).NewClient(nil)
		t.Cleanup(func() { c.Close() })
		if err := newStore(t, opaque{c}, redistest.Prefix(t)).Ping(ctx); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
}

// TestPingRedisDown: where nothing listens, Ping names the address and the
// refused connection, whether its context lets go-redis finish its dial
// retries or ends first (the middleware's 100 ms); where Redis hangs, it
// returns by its deadline and names the address.
func TestPingRedisDown(t *testing.T) {
	closed := redistest.ClosedAddr(t)
	for _, timeout := range []time.Duration{5 * time.Second, 100 * time.Millisecond} {
		t.Run("refused within "+timeout.String(), func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: closed, ContextTimeoutEnabled: true})
			t.Cleanup(func() { c.Close() })
			err, elapsed := timed(timeout, newStore(t, c, "down").Ping)
			checkDown(t, err, elapsed, timeout, "ratekit: redisstore: cannot reach Redis at "+closed+": ", "connection refused", closed)
		})
	}
	t.Run("opaque refused", func(t *testing.T) {
		// The store does not watch the dials of a client type it does not
		// know: its Ping names the refusal once go-redis reports it.
		c := redis.NewClient(&redis.Options{Addr: closed, ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		const timeout = 5 * time.Second
		err, elapsed := timed(timeout, newStore(t, opaque{c}, "down").Ping)
		checkDown(t, err, elapsed, timeout, "ratekit: redisstore: cannot reach Redis: ", "connection refused", closed)
	})
	t.Run("cluster refused", func(t *testing.T) {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{closed}, ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		err, elapsed := timed(5*time.Second, newStore(t, c, "down").Ping)
		checkDown(t, err, elapsed, 5*time.Second, "ratekit: redisstore: cannot reach Redis at "+closed+": ", "connection refused", closed)
	})
	t.Run("hung", func(t *testing.T) {
		hung := redistest.Blackhole(t)
		c := redis.NewClient(&redis.Options{Addr: hung, ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		const timeout = 100 * time.Millisecond
		err, elapsed := timed(timeout, newStore(t, c, "down").Ping)
		checkDown(t, err, elapsed, timeout, "ratekit: redisstore: cannot reach Redis at "+hung+": ", "deadline exceeded")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%v is not context.DeadlineExceeded", err)
		}
	})
}

// TestTakeRedisDown: a Take that cannot reach Redis fails by its deadline
// with an error that names the cause. go-redis dials in the background and
// retries a refused dial for a few hundred ms before it reports it, so
// without the store's dial watch the error would only say "context deadline
// exceeded".
func TestTakeRedisDown(t *testing.T) {
	limits := []ratekit.Limit{ratekit.FixedWindow(1, time.Second)}
	const timeout = 100 * time.Millisecond
	t.Run("refused", func(t *testing.T) {
		closed := redistest.ClosedAddr(t)
		c := redis.NewClient(&redis.Options{Addr: closed, ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		s := newStore(t, c, "down")
		for i := range 3 {
			err, elapsed := timed(timeout, func(ctx context.Context) error {
				_, err := storetest.Take(ctx, s, "subject", limits, 1)
				return err
			})
			checkDown(t, err, elapsed, timeout, "ratekit: redisstore: ", "connection refused", closed)
			if t.Failed() {
				t.Fatalf("Take %d", i)
			}
		}
	})
	t.Run("refused at once", func(t *testing.T) {
		// With one dial attempt go-redis reports each refusal at once: the
		// store tries again (10 ms, then 20 ms later) and gives up when the
		// 15 ms deadline ends its pause, naming both.
		closed := redistest.ClosedAddr(t)
		c := redis.NewClient(&redis.Options{Addr: closed, ContextTimeoutEnabled: true, DialerRetries: 1})
		t.Cleanup(func() { c.Close() })
		const timeout = 15 * time.Millisecond
		err, elapsed := timed(timeout, func(ctx context.Context) error {
			_, err := storetest.Take(ctx, newStore(t, c, "down"), "subject", limits, 1)
			return err
		})
		checkDown(t, err, elapsed, timeout, "ratekit: redisstore: context deadline exceeded (last error: dial tcp ", "connection refused", closed)
		var op *net.OpError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &op) || op.Op != "dial" {
			t.Errorf("%v does not wrap both context.DeadlineExceeded and the dial's *net.OpError", err)
		}
	})
	t.Run("hung", func(t *testing.T) {
		c := redis.NewClient(&redis.Options{Addr: redistest.Blackhole(t), ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		s := newStore(t, c, "down")
		err, elapsed := timed(timeout, func(ctx context.Context) error {
			_, err := storetest.Take(ctx, s, "subject", limits, 1)
			return err
		})
		checkDown(t, err, elapsed, timeout, "ratekit: redisstore: ", "deadline exceeded")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%v is not context.DeadlineExceeded", err)
		}
	})
}

// timed runs f with a context of the timeout and measures it.
func timed(timeout time.Duration, f func(context.Context) error) (error, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	return err, time.Since(start)
}

// checkDown checks the failure of a call against a Redis that is down.
func checkDown(t *testing.T, err error, elapsed, timeout time.Duration, prefix string, says ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("the call succeeded")
	}
	msg := err.Error()
	if elapsed > timeout+margin {
		t.Errorf("the call took %v, want ≤ %v + %v (%v)", elapsed, timeout, margin, msg)
	}
	if !strings.HasPrefix(msg, prefix) {
		t.Errorf("error %q does not start with %q", msg, prefix)
	}
	if n := strings.Count(msg, "ratekit: "); n != 1 {
		t.Errorf("error %q holds \"ratekit: \" %d times, want once", msg, n)
	}
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q does not say %q", msg, s)
		}
	}
}

// TestErrorsHaveOnePrefix: the store's own errors start with "ratekit: "
// exactly once, also where they report another package's error.
func TestErrorsHaveOnePrefix(t *testing.T) {
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s := newStore(t, c, redistest.Prefix(t))
	ctx := context.Background()
	limits := []ratekit.Limit{ratekit.FixedWindow(1, time.Minute)}
	_, errAlgorithm := redisstore.New(c, redisstore.WithAlgorithm("Bad-Name", "function() end"))
	_, errSource := redisstore.New(c, redisstore.WithAlgorithm("blank", " "))
	_, errPrefix := redisstore.New(c, redisstore.WithPrefix("a b"))
	_, errNil := redisstore.New(nil)
	_, errNilClient := redisstore.New((*redis.Client)(nil))
	_, errKey := storetest.Take(ctx, s, "", limits, 1)
	_, errCost := storetest.Take(ctx, s, "k", limits, -1)
	_, errCustom := storetest.Take(ctx, s, "k", []ratekit.Limit{ratekit.Custom("holds", 1, time.Minute, [3]int64{})}, 1)
	for name, err := range map[string]error{
		"algorithm name": errAlgorithm, "algorithm source": errSource, "prefix": errPrefix, "nil": errNil,
		"nil client": errNilClient, "empty key": errKey, "cost": errCost, "unknown algorithm": errCustom,
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "ratekit: ") || strings.Count(msg, "ratekit: ") != 1 {
			t.Errorf("%s: %q does not hold \"ratekit: \" exactly once, at the start", name, msg)
		}
	}
}
