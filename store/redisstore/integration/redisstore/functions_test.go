package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/storetest"
)

// commandCalls returns the calls of each command in INFO commandstats.
func commandCalls(t *testing.T, c *redis.Client) map[string]int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		out[name] = n
	}
	return out
}

// TestFunctionsLoadedOnce: on Redis 7 the store loads its library once and
// then sends FCALL only; the fixed window's admitted calls send INCRBY and
// PTTL (PEXPIRE instead of PTTL for a new window), the first denial is taken
// back in the same call (DECRBY), and later calls of the denied subject are
// checked read-only first (GET and PTTL), so the counter holds the admitted
// calls only; every call reads the limit's override key (GET). After a
// Reset the subject is charged INCRBY-first again.
func TestFunctionsLoadedOnce(t *testing.T) {
	srv := redistest.Private(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s := newStore(t, c, "fn")
	limits := []ratekit.Limit{ratekit.FixedWindow(60, time.Minute)}
	before := commandCalls(t, c)
	for i := range 100 {
		d := take(t, s, "subject", limits, 1)
		if d.Allowed != (i < 60) {
			t.Fatalf("call %d: allowed %t", i, d.Allowed)
		}
	}
	after := commandCalls(t, c)
	delta := func(name string) int64 { return after[name] - before[name] }
	libs, err := c.FunctionList(context.Background(), redis.FunctionListQuery{}).Result()
	if err != nil || len(libs) != 1 || !strings.HasPrefix(libs[0].Name, "ratekit_") || len(libs[0].Functions) != 4 {
		t.Fatalf("libraries %+v %v; want one ratekit_ library of 4 functions (decide, override, reputation, settle)", libs, err)
	}
	want := map[string]int64{
		"function|load": 1, "fcall": 101, "evalsha": 0, "eval": 0, // the first FCALL finds no function
		"incrby": 61, "pexpire": 1, "pttl": 99, "decrby": 1, "get": 39 + 100, "set": 0, // + each call's override key
	}
	for name, n := range want {
		if got := delta(name); got != n {
			t.Errorf("%s: %d calls, want %d", name, got, n)
		}
	}
	keys, _ := s.Keys("subject", limits)
	if v := c.Get(context.Background(), keys[0]).Val(); v != "60" {
		t.Fatalf("counter %q, want 60: denials were recorded", v)
	}

	// after a Reset the subject is read once (the key is gone: admitted),
	// then charged INCRBY-first
	if err := storetest.Reset(context.Background(), s, "subject", limits); err != nil {
		t.Fatal(err)
	}
	before = commandCalls(t, c)
	for range 2 {
		if d := take(t, s, "subject", limits, 1); !d.Allowed {
			t.Fatal("denied after Reset")
		}
	}
	after = commandCalls(t, c)
	for name, n := range map[string]int64{"get": 1 + 2, "incrby": 2, "pexpire": 1, "pttl": 1, "decrby": 0} {
		if got := delta(name); got != n {
			t.Errorf("after Reset: %s: %d calls, want %d", name, got, n)
		}
	}
	if v := c.Get(context.Background(), keys[0]).Val(); v != "2" {
		t.Fatalf("counter %q after Reset and 2 calls, want 2", v)
	}
}

// TestWithoutFunctions: a server without FCALL (Redis 6.2, played here by a
// Redis 7 whose FCALL is renamed away) gets scripts: EVALSHA, and EVAL when
// the script cache is empty.
func TestWithoutFunctions(t *testing.T) {
	srv := redistest.Private(t, "--rename-command", "FCALL", "")
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s := newStore(t, c, "nofn")
	limits := []ratekit.Limit{ratekit.GCRA(10, time.Second, 5)}
	before := commandCalls(t, c)
	for i := range 5 {
		if d := take(t, s, "subject", limits, 1); !d.Allowed || d.Remaining != int64(4-i) {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	after := commandCalls(t, c)
	if n := after["evalsha"] - before["evalsha"]; n != 5 {
		t.Errorf("%d EVALSHA, want 5", n)
	}
	if n := after["eval"] - before["eval"]; n != 1 {
		t.Errorf("%d EVAL, want 1 (the first call's NOSCRIPT)", n)
	}
}

// TestFlushMidRun runs FUNCTION FLUSH and SCRIPT FLUSH while 8 callers (each
// call on a connection of its own) or 32 (most calls pipelined) take from
// one subject: no call fails, and the counter holds exactly the admitted
// calls (a call is retried only when its reply proves it did not run).
func TestFlushMidRun(t *testing.T) {
	for _, callers := range []int{8, 32} {
		t.Run(fmt.Sprint(callers), func(t *testing.T) { testFlushMidRun(t, callers) })
	}
}

func testFlushMidRun(t *testing.T, callers int) {
	srv := redistest.Private(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	var batched atomic.Int64 // pipelines of more than one call
	c.AddHook(countBatched(&batched))
	s := newStore(t, c, "flush")
	limits := []ratekit.Limit{ratekit.FixedWindow(1<<40, time.Hour)}
	var admitted, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d, err := storetest.Take(context.Background(), s, "subject", limits, 1)
				switch {
				case err != nil:
					failed.Add(1)
					t.Error(err)
				case d.Allowed:
					admitted.Add(1)
				}
			}
		}()
	}
	ctx := context.Background()
	for i := range 20 {
		time.Sleep(20 * time.Millisecond)
		if i%2 == 0 {
			if err := c.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		} else if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	keys, _ := s.Keys("subject", limits)
	n, _ := c.Get(ctx, keys[0]).Int64()
	if failed.Load() != 0 || n != admitted.Load() || n == 0 {
		t.Fatalf("%d failed, %d admitted, counter %d; want none failed and the counter = admitted", failed.Load(), admitted.Load(), n)
	}
	if loads := commandCalls(t, c)["function|load"]; loads < 10 {
		t.Fatalf("%d FUNCTION LOADs after 10 flushes", loads)
	}
	if callers > 8 && batched.Load() == 0 {
		t.Fatalf("%d callers: no pipeline of several calls", callers)
	}
}

// TestRestart kills the server and starts it again, empty (no persistence):
// the first call after it finds no function and loads the library; every
// call decides.
func TestRestart(t *testing.T) {
	srv := redistest.Private(t)
	c := srv.NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s := newStore(t, c, "restart")
	limits := []ratekit.Limit{ratekit.FixedWindow(100, time.Hour), ratekit.GCRA(100, time.Hour, 100)}
	for round := range 3 {
		for i := range 5 {
			if d := take(t, s, "subject", limits, 1); !d.Allowed || d.Remaining != int64(99-i) {
				t.Fatalf("round %d, call %d: %+v", round, i, d)
			}
		}
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTakenBack: fixed windows charge with INCRBY before the later limits
// decide; when one of those denies, the charge is taken back in the same
// call (a window the call began is deleted), so the denied call leaves no
// trace, as the check-then-commit algorithms leave none.
func TestTakenBack(t *testing.T) {
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	s := newStore(t, c, redistest.Prefix(t))
	wide, tight := ratekit.FixedWindow(10, time.Hour).Named("wide"), ratekit.FixedWindow(1, time.Hour).Named("tight")
	gcra := ratekit.GCRA(1, time.Hour, 1)
	for _, limits := range [][]ratekit.Limit{{wide, tight}, {wide, gcra}} {
		take(t, s, "used", limits[1:], 1) // the second limit is exhausted, the first untouched
		if d := take(t, s, "used", limits, 1); d.Allowed || d.States[0].Remaining != 10 || d.States[0].ResetAfter != 0 {
			t.Fatalf("%v: %+v; want denied, the wide window untouched", limits, d)
		}
		keys, _ := s.Keys("used", limits)
		if n := c.Exists(ctx, keys[0]).Val(); n != 0 {
			t.Fatalf("%v: the denied call began the wide window", limits)
		}
		take(t, s, "fresh", limits, 1)
		if d := take(t, s, "fresh", limits, 1); d.Allowed || d.States[0].Remaining != 9 {
			t.Fatalf("%v: %+v; want denied, 9 left in the wide window", limits, d)
		}
		keys, _ = s.Keys("fresh", limits)
		if v := c.Get(ctx, keys[0]).Val(); v != "1" {
			t.Fatalf("%v: wide window holds %q after one admitted call, want 1", limits, v)
		}
		s = newStore(t, c, redistest.Prefix(t))
	}
}
