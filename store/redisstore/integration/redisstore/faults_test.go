package redisstore_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
)

// TestLostReplyChargesOnce loses the reply to a script that Redis ran. A
// go-redis client with its default MaxRetries (3) would send the script
// again; the store's command is NoRetry, so the subject is charged once and
// the call reports an error for the error policy.
func TestLostReplyChargesOnce(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy := redistest.NewProxy(t, srv.Addr)
	ctx := context.Background()
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr, ContextTimeoutEnabled: true}) // default retries
	direct := srv.NewClient(nil)
	t.Cleanup(func() { viaProxy.Close(); direct.Close() })

	t.Run("plain script is charged twice", func(t *testing.T) {
		// The hazard the store avoids, shown with go-redis's own Script.Run.
		key := redistest.Prefix(t) + ":incr"
		incr := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
		if err := incr.Load(ctx, direct).Err(); err != nil {
			t.Fatal(err)
		}
		if err := viaProxy.Ping(ctx).Err(); err != nil { // warm a connection: the handshake's reply must not be the one lost
			t.Fatal(err)
		}
		proxy.DropNextReply()
		if err := incr.Run(ctx, viaProxy, []string{key}).Err(); err != nil {
			t.Fatalf("retried script: %v", err)
		}
		if n, _ := direct.Get(ctx, key).Int(); n != 2 {
			t.Fatalf("INCR ran %d times; the retry hazard did not show", n)
		}
	})

	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"one": proxy.Addr}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { ring.Close() })
	for name, client := range map[string]redis.UniversalClient{"client": viaProxy, "ring": ring} {
		t.Run("store is charged once via "+name, func(t *testing.T) { chargedOnce(t, client, direct, proxy) })
	}
}

// chargedOnce loses the reply to a store's script and checks the charge.
func chargedOnce(t *testing.T, viaProxy redis.UniversalClient, direct *redis.Client, proxy *redistest.Proxy) {
	ctx := context.Background()
	{
		s := newStore(t, viaProxy, redistest.Prefix(t))
		limits := []ratekit.Limit{ratekit.FixedWindow(10, time.Minute)}
		take(t, s, "warm", limits, 1) // loads the script and warms a connection
		proxy.DropNextReply()
		if _, err := storetest.Take(ctx, s, "subject", limits, 1); err == nil {
			t.Fatal("Take succeeded although its reply was lost")
		}
		keys, _ := s.Keys("subject", limits)
		if v := direct.Get(ctx, keys[0]).Val(); v != "1" {
			t.Fatalf("counter after one lost reply = %q, want 1", v)
		}
		if d := take(t, s, "subject", limits, 1); d.Remaining != 8 {
			t.Fatalf("next Take: remaining %d, want 8", d.Remaining)
		}
	}
}

// TestScriptCacheFlushed runs after SCRIPT FLUSH: the store falls back to EVAL.
func TestScriptCacheFlushed(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s := newStore(t, c, redistest.Prefix(t))
	limits := []ratekit.Limit{ratekit.GCRA(10, time.Second, 5)}
	for i := range 3 {
		if err := c.ScriptFlush(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		if d := take(t, s, "subject", limits, 1); !d.Allowed || d.Remaining != int64(4-i) {
			t.Fatalf("after SCRIPT FLUSH %d: %+v", i, d)
		}
	}
}

// TestRejectsBadCalls: duplicate limits and clients that could retry are
// refused before anything reaches Redis.
func TestRejectsBadCalls(t *testing.T) {
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s := newStore(t, c, redistest.Prefix(t))
	l := ratekit.FixedWindow(1, time.Minute)
	if _, err := storetest.Take(context.Background(), s, "k", []ratekit.Limit{l, l}, 1); !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Errorf("duplicate limits: %v", err)
	}
	if _, err := storetest.Take(context.Background(), s, "k", nil, 1); !errors.Is(err, ratekit.ErrInvalidLimit) {
		t.Errorf("no limits: %v", err)
	}
	if _, err := redisstore.New(scripterOnly{c}); err == nil {
		t.Error("a Scripter without Process was accepted")
	}
	if _, err := redisstore.New(c, redisstore.WithPrefix("a{b}")); err == nil {
		t.Error("a braced prefix was accepted")
	}
}

// scripterOnly hides every method of a client but redis.Scripter's.
type scripterOnly struct{ redis.Scripter }
