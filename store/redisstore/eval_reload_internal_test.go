package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/storetest"
)

// replyError is an error reply of Redis as go-redis returns it: a string
// with a RedisError method (a redis.Error), as go-redis's proto.RedisError.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// TestStaleHint classifies failures: those that may come from a changed
// cluster (a dead, unreachable or hung node, a node changing roles or slots)
// ask for a slot-map reload; script errors and other replies do not.
func TestStaleHint(t *testing.T) {
	reply := func(msg string) error { return fmt.Errorf("wrapped: %w", replyError(msg)) }
	cases := []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
		{&net.OpError{Op: "write", Err: errors.New("broken pipe")}, true},
		{io.EOF, true},
		{io.ErrUnexpectedEOF, true},
		{os.ErrDeadlineExceeded, true},
		{context.DeadlineExceeded, true},
		{redis.ErrPoolTimeout, true},
		{reply("CLUSTERDOWN The cluster is down"), true},
		{reply("MASTERDOWN Link with MASTER is down"), true},
		{reply("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{reply("LOADING Redis is loading the dataset in memory"), true},
		{reply("READONLY You can't write against a read only replica."), true},
		{reply("MOVED 3999 127.0.0.1:6381"), true},
		{reply("ASK 3999 127.0.0.1:6381"), true},
		{context.Canceled, false},
		{redis.ErrClosed, false},
		{reply("NOSCRIPT No matching script"), false},
		{reply("BUSY Redis is busy running a script"), false},
		{reply("OOM command not allowed when used memory > 'maxmemory'"), false},
		{reply("ERR something"), false},
		{reply("MOVEDX not a redirect"), false},
	}
	for _, tc := range cases {
		if tc.err == nil {
			t.Fatal("no error made")
		}
		if got := staleHint(tc.err); got != tc.want {
			t.Errorf("staleHint(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestReloadSlots checks that a store asks its cluster client for a slot-map
// reload after a failure that hints at a changed cluster, in the background
// and at most once per reloadEvery, and not after other failures. The client's
// ClusterSlots option counts the reloads (the first takes a second, which no
// call may wait for); no server is needed.
func TestReloadSlots(t *testing.T) {
	var loads atomic.Int32
	closed := closedAddr(t)
	c := redis.NewClusterClient(&redis.ClusterOptions{
		ContextTimeoutEnabled: true,
		ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
			if loads.Add(1) == 1 {
				time.Sleep(time.Second)
			}
			return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: closed}}}}, nil
		},
	})
	t.Cleanup(func() { c.Close() })
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	waitLoads := func(want int32) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for loads.Load() < want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // polling go-redis's background reload
		}
		time.Sleep(50 * time.Millisecond) // let any surplus reload show
		if got := loads.Load(); got != want {
			t.Fatalf("%d slot-map loads, want %d", got, want)
		}
	}

	s.reloadSlots(time.Now(), errors.New("ERR something")) // not a hint
	waitLoads(0)
	start := time.Now()
	for range 100 {
		s.reloadSlots(time.Now(), io.EOF)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("100 failures took %v: the reload must not block the call", d)
	}
	waitLoads(1)
	time.Sleep(1500 * time.Millisecond) // the slow load and go-redis's cooldown are over
	s.reloadSlots(time.Now(), &net.OpError{Op: "dial", Err: errors.New("connection refused")})
	s.reloadSlots(time.Now(), &net.OpError{Op: "dial", Err: errors.New("connection refused")})
	waitLoads(2)

	// A call that fails on a dead node asks for one.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	time.Sleep(reloadEvery)
	if _, err := storetest.Peek(ctx, s, "k", []ratekit.Limit{ratekit.FixedWindow(1, time.Second)}); err == nil {
		t.Fatal("a call to a closed address succeeded")
	}
	if loads.Load() < 3 {
		waitLoads(3)
	}
}

// closedAddr returns a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
