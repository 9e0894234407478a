package redisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestRenewalsOutlastTwoTimeouts black-holes the connection of an instance
// holding an InFlight(1) slot for its next two renewals, which time out,
// and restores it for the third: the slot is never lost. Another instance,
// on a connection of its own, is refused throughout, and the renewals go on.
func TestRenewalsOutlastTwoTimeouts(t *testing.T) {
	const lease = 400 * time.Millisecond
	srv := redistest.Standalone(t)
	prefix := redistest.Prefix(t)
	var hole atomic.Bool
	c := srv.NewClient(&redis.Options{Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &holeConn{Conn: conn, hole: &hole}, nil
	}})
	direct := srv.NewClient(nil)
	t.Cleanup(func() { c.Close(); direct.Close() })
	// The hole opens as the first renewal starts and closes as the third does.
	st := &renewHook{Store: newStore(t, c, prefix), renewals: make(chan renewed, 100), before: func(n int64) {
		switch n {
		case 1:
			hole.Store(true)
		case 3:
			hole.Store(false)
		}
	}}
	limit := ratekit.InFlight(1).Lease(lease).Named("conc")
	l, err := ratekit.New(st, limit)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ratekit.New(newStore(t, direct, prefix), limit)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := l.Reserve(ctx, "a", 1)
	if err != nil || !r.Decision.Allowed {
		t.Fatal(r, err)
	}
	defer r.Release(ctx)
	defer hole.Store(false) // first, should the test fail within the hole
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	bound := time.After(5 * time.Second)
	for n := 0; n < 5; {
		select {
		case rn := <-st.renewals:
			n++
			switch {
			case n <= 2 && rn.err == nil:
				t.Fatalf("renewal %d: black-holed, yet it succeeded", n)
			case n > 2 && (rn.err != nil || !rn.held):
				t.Fatalf("renewal %d, after two that timed out: held %v, %v; want the slot still held", n, rn.held, rn.err)
			}
		case <-tick.C:
			r2, err := other.Reserve(ctx, "a", 1)
			if err != nil {
				t.Fatal(err)
			}
			if r2.Decision.Allowed {
				_ = r2.Release(ctx)
				t.Fatalf("after %d renewals: another instance took the slot", n)
			}
		case <-bound:
			t.Fatalf("%d renewals in 5 s, want 5", n)
		}
	}
}

// holeConn is a connection that swallows what is written to it while hole
// is set: the server never hears of the command, and the reply never comes.
type holeConn struct {
	net.Conn
	hole *atomic.Bool
}

func (c *holeConn) Write(b []byte) (int, error) {
	if c.hole.Load() {
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// renewHook is a store that calls before(n) ahead of its nth renewal, and
// reports each renewal's result.
type renewHook struct {
	*redisstore.Store
	n        atomic.Int64
	before   func(n int64)
	renewals chan renewed
}

func (s *renewHook) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

// renewed is one renewal's result.
type renewed struct {
	held bool
	err  error
}

func (h *renewHook) Renew(ctx context.Context, key string, limits []ratekit.Limit, rc *ratekit.Receipt) (bool, error) {
	h.before(h.n.Add(1))
	held, err := storetest.Renew(ctx, h.Store, key, limits, rc)
	h.renewals <- renewed{held, err}
	return held, err
}
