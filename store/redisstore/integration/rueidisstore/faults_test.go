package rueidisstore_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
)

func get(t *testing.T, c rueidis.Client, key string) string {
	t.Helper()
	v, err := c.Do(context.Background(), c.B().Get().Key(key).Build()).ToString()
	if err != nil && !rueidis.IsRedisNil(err) {
		t.Fatal(err)
	}
	return v
}

// TestLostReplyChargesOnce loses the reply to a call (the proxy swallows it
// and closes the connection). rueidis, with its default options, sends a
// read-only command again after such a failure; the store's calls carry no
// retryable tag, so the subject is charged at most once (once when Redis ran
// the call before the connection closed, which the test requires to happen
// at least once) and the call reports an error for the error policy.
func TestLostReplyChargesOnce(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy := redistest.NewProxy(t, srv.Addr)
	direct := newClient(t, srv.Addr)
	s := newStore(t, newClient(t, proxy.Addr), redistest.Prefix(t))
	limits := []ratekit.Limit{ratekit.FixedWindow(10, time.Minute)}
	take(t, s, "warm", limits, 1) // loads the library
	lost := 0
	for i := range 5 {
		subject := "subject-" + strconv.Itoa(i)
		proxy.DropNextReply()
		_, err := storetest.Take(context.Background(), s, subject, limits, 1)
		keys, _ := s.Keys(subject, limits)
		v := get(t, direct, keys[0])
		if err != nil && v == "1" {
			lost++ // ran, and its reply was lost
		}
		if v != "1" && (err == nil || v != "") {
			t.Fatalf("%s: counter %q after one call (error %v); want 1, or nothing when the call failed before it ran", subject, v, err)
		}
		for { // the client reconnects in the background
			if _, err := storetest.Peek(context.Background(), s, "warm", limits); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond) // polling the client's reconnection, not a race
		}
	}
	if lost == 0 {
		t.Fatal("no call ran and lost its reply: the proxy dropped something else")
	}
}

// TestFlushAndRestart: FUNCTION FLUSH, SCRIPT FLUSH and a restart of an
// empty server (no persistence) cost no decision: a missing library is
// loaded again and the call sent once more, and after the restart the
// client (AlwaysPipelining, see ClientOption) dials anew rather than write
// to the closed connection.
func TestFlushAndRestart(t *testing.T) {
	srv := redistest.Private(t)
	c := newClient(t, srv.Addr)
	s := newStore(t, c, "flush")
	limits := []ratekit.Limit{ratekit.FixedWindow(100, time.Hour), ratekit.GCRA(100, time.Hour, 100)}
	ctx := context.Background()
	check := func(step string, want int64) {
		t.Helper()
		if d := take(t, s, "subject", limits, 1); !d.Allowed || d.Remaining != want {
			t.Fatalf("%s: %+v, want %d left", step, d, want)
		}
	}
	check("first", 99)
	if err := c.Do(ctx, c.B().FunctionFlush().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	check("after FUNCTION FLUSH", 98)
	if err := c.Do(ctx, c.B().ScriptFlush().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	check("after SCRIPT FLUSH", 97)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	check("after a restart", 99) // the pipeline's reader saw the old connection close
}

// TestBoundedByContext: a Redis that stops answering costs a call its
// context's deadline, not more.
func TestBoundedByContext(t *testing.T) {
	srv := redistest.Private(t)
	s := newStore(t, newClient(t, srv.Addr), "hung")
	limits := []ratekit.Limit{ratekit.FixedWindow(100, time.Hour)}
	take(t, s, "subject", limits, 1)
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	defer srv.Thaw()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := storetest.Take(ctx, s, "subject", limits, 1)
	if elapsed := time.Since(start); err == nil || !errors.Is(err, context.DeadlineExceeded) || elapsed > time.Second {
		t.Fatalf("Take on a frozen Redis: %v after %v; want the context's deadline, within a second", err, elapsed)
	}
}
