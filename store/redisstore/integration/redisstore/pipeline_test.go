package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// slowAlgorithm is a custom algorithm that holds Redis for p1 ms, then
// admits without writing: a call that Redis is slow to answer.
const slowAlgorithm = `function(r, key, ms)
  local t = redis.call('TIME')
  local stop = t[1] * 1000 + t[2] / 1000 + ms
  repeat t = redis.call('TIME') until t[1] * 1000 + t[2] / 1000 >= stop
  r.allowed, r.remaining, r.reset, r.retry, r.flags = true, 1, 0, 0, 0
  return r
end`

// sendHook is a go-redis hook that is called with each command or pipeline
// the client is about to dispatch (a command alone as a pipeline of one).
type sendHook func(cmds []redis.Cmder)

func (h sendHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h sendHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		h([]redis.Cmder{c})
		return next(ctx, c)
	}
}

func (h sendHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h(cmds)
		return next(ctx, cmds)
	}
}

// countBatched returns a sendHook that counts the pipelines of more than one
// command in n.
func countBatched(n *atomic.Int64) sendHook {
	return func(cmds []redis.Cmder) {
		if len(cmds) > 1 {
			n.Add(1)
		}
	}
}

// names reports whether one of c's arguments contains s.
func names(c redis.Cmder, s string) bool {
	for _, a := range c.Args() {
		switch a := a.(type) {
		case string:
			if strings.Contains(a, s) {
				return true
			}
		case *string:
			if strings.Contains(*a, s) {
				return true
			}
		}
	}
	return false
}

// TestPipelinedCallBoundedByItsTimeout: through ClientOptions' client the
// store sends its calls through go-redis's autopipeliner once more than 8 are
// in flight. While Redis spends 400 ms on one call, 7 more wait on
// connections of their own, a ninth goes out as a batch of its own and waits
// for Redis, and a tenth is held for the next batch (the autopipeliner holds
// a few calls while a batch is in flight). The tenth returns when its own
// 50 ms timeout ends, not when the batch does. It is not written (its
// context ended before its turn), so it charges nothing, while the batch in
// flight is answered once Redis is free.
func TestPipelinedCallBoundedByItsTimeout(t *testing.T) {
	const (
		timeout = 50 * time.Millisecond
		slow    = 400 * time.Millisecond
		direct  = 8 // calls in flight that go out on connections of their own
	)
	srv := redistest.Private(t)
	c := redis.NewClient(redisstore.ClientOptions(srv.Addr))
	t.Cleanup(func() { c.Close() })
	// Added before the store's own hook, this one sees the queued call
	// when its batch is dispatched, whether the store drops it or not.
	dispatched := make(chan struct{})
	var once sync.Once
	c.AddHook(sendHook(func(cmds []redis.Cmder) {
		for _, cmd := range cmds {
			if names(cmd, "{queued}") {
				once.Do(func() { close(dispatched) })
			}
		}
	}))
	s := newStore(t, c, redistest.Prefix(t), redisstore.WithAlgorithm("slow", slowAlgorithm))
	fixed := []ratekit.Limit{ratekit.FixedWindow(10, time.Minute)}
	take(t, s, "warm", fixed, 1) // loads the library
	warmPool(t, c, direct+1)     // no call waits on a dial
	sent := make(chan int, 16)
	c.AddHook(sendHook(func(cmds []redis.Cmder) { sent <- len(cmds) }))

	call := func(key string, limits []ratekit.Limit) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := storetest.Take(context.Background(), s, key, limits, 1)
			done <- err
		}()
		return done
	}
	slowDone := call("slow", []ratekit.Limit{ratekit.Custom("slow", 1, time.Minute, [3]int64{slow.Milliseconds()})})
	<-sent
	// Redis is busy with the slow call once a PING on another connection
	// goes unanswered.
	probe := srv.NewClient(nil)
	t.Cleanup(func() { probe.Close() })
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		err := probe.Ping(ctx).Err()
		cancel()
		if err != nil {
			break
		}
	}
	var waiting []<-chan error
	for i := range direct - 1 {
		waiting = append(waiting, call(fmt.Sprintf("direct-%d", i), fixed))
		<-sent
	}
	batchDone := call("batch", fixed) // a batch of one, written, waiting for Redis
	<-sent

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	_, err := storetest.Take(ctx, s, "queued", fixed, 1)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take queued behind a slow batch: err %v, want context.DeadlineExceeded", err)
	}
	if took > timeout+100*time.Millisecond { // far from the slow call's 400 ms
		t.Fatalf("Take queued behind a slow batch returned after %v, want about its timeout %v", took, timeout)
	}
	if err := <-slowDone; err != nil {
		t.Fatalf("slow call: %v", err)
	}
	for _, done := range append(waiting, batchDone) {
		if err := <-done; err != nil {
			t.Fatalf("a call in flight: %v", err)
		}
	}
	select { // the queued call's turn comes, after its caller has gone
	case <-dispatched:
	case <-time.After(5 * time.Second):
		t.Fatal("the queued call was never dispatched")
	}
	if d := take(t, s, "batch", fixed, 1); d.Remaining != 8 {
		t.Fatalf("the batch's subject after Redis answered: %+v, want 8 remaining (the batch ran once)", d)
	}
	if d := take(t, s, "queued", fixed, 1); !d.Allowed || d.Remaining != 9 {
		t.Fatalf("the timed-out call's subject: %+v, want allowed with 9 remaining (the call never ran)", d)
	}
}

// TestPipelinedCallsCountExactly: a standalone client from ClientOptions and
// a cluster client with AutoPipelineOptions (whose autopipeliner routes each
// call by slot to its node) decide 32 goroutines' concurrent calls on 40
// subjects, two limits a call, in pipelines of several calls: every call is
// admitted and charged once, as Peek shows afterwards.
func TestPipelinedCallsCountExactly(t *testing.T) {
	const goroutines, calls, subjects = 32, 50, 40
	clients := map[string]func() redis.UniversalClient{
		"standalone": func() redis.UniversalClient {
			return redis.NewClient(redisstore.ClientOptions(redistest.Standalone(t).Addr))
		},
		"cluster": func() redis.UniversalClient {
			return redistest.StartCluster(t).NewClient(&redis.ClusterOptions{AutoPipelineOptions: redisstore.ClientOptions("").AutoPipelineOptions})
		},
	}
	for name, newClient := range clients {
		t.Run(name, func(t *testing.T) {
			c := newClient()
			t.Cleanup(func() { c.Close() })
			var batched atomic.Int64 // pipelines of more than one call
			c.AddHook(countBatched(&batched))
			s := newStore(t, c, redistest.Prefix(t))
			limits := []ratekit.Limit{
				ratekit.FixedWindow(1_000_000, time.Hour).Named("fixed"),
				ratekit.GCRA(1, time.Hour, 1_000_000).Named("gcra"),
			}
			errs := make(chan error, goroutines)
			for g := range goroutines {
				go func() {
					for i := range calls {
						d, err := storetest.Take(context.Background(), s, fmt.Sprintf("subject-%d", (g*calls+i)%subjects), limits, 1)
						if err == nil && !d.Allowed {
							err = fmt.Errorf("denied: %+v", d)
						}
						if err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for range goroutines {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if batched.Load() == 0 {
				t.Fatalf("no pipeline of more than one call: the calls were not pipelined")
			}
			for i := range subjects {
				d, err := storetest.Peek(context.Background(), s, fmt.Sprintf("subject-%d", i), limits)
				if err != nil {
					t.Fatal(err)
				}
				want := int64(1_000_000 - goroutines*calls/subjects)
				for _, st := range d.States {
					if st.Remaining != want {
						t.Fatalf("subject-%d, %s: %d remaining, want %d (each call charged once)", i, st.Limit.Name(), st.Remaining, want)
					}
				}
			}
		})
	}
}

// TestHarnessPipelinesAsClientOptions: the test servers' clients pipeline
// as ClientOptions' do, so that every test of the store runs on the
// documented setup.
func TestHarnessPipelinesAsClientOptions(t *testing.T) {
	want := *redisstore.ClientOptions("").AutoPipelineOptions
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	if got := c.Options().AutoPipelineOptions; got == nil || *got != want {
		t.Fatalf("the harness's standalone client: AutoPipelineOptions %+v, want %+v", got, want)
	}
	cc := redistest.StartCluster(t).NewClient(nil)
	t.Cleanup(func() { cc.Close() })
	if got := cc.Options().AutoPipelineOptions; got == nil || *got != want {
		t.Fatalf("the harness's cluster client: AutoPipelineOptions %+v, want %+v", got, want)
	}
}
