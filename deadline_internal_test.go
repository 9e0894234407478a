package ratekit

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// TestBoundedContext: a bound store call's context ends at its timeout,
// rounded up to the tick and never earlier, keeps the parent's values and
// not its cancellation, and calls made together share one Done channel.
func TestBoundedContext(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	now := time.Now()
	const timeout = 30 * time.Millisecond
	ctx := bounded(parent, now, timeout)
	if ctx == nil {
		t.Fatal("no bounded context for 30 ms")
	}
	d, ok := ctx.Deadline()
	if !ok || d.Before(now.Add(timeout)) || !d.Before(now.Add(timeout+tickWidth)) {
		t.Fatalf("deadline %v after now, want in [%v, %v)", d.Sub(now), timeout, timeout+tickWidth)
	}
	if v := ctx.Value(ctxKey{}); v != "v" {
		t.Fatalf("value %v, want the parent's", v)
	}
	if other := bounded(context.Background(), now, timeout); other.Done() != ctx.Done() {
		t.Fatal("calls with one deadline tick have separate Done channels")
	}
	cancel()
	if err := ctx.Err(); err != nil {
		t.Fatalf("Err %v after the parent's cancellation, want nil", err)
	}
	select {
	case <-ctx.Done():
		t.Fatal("done with the parent's cancellation")
	default:
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not done 10 s after a 30 ms timeout")
	}
	if since := time.Since(now); since < timeout {
		t.Fatalf("done after %v, before its deadline", since)
	}
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err %v after the deadline, want DeadlineExceeded", err)
	}
	// a later call gets a fresh tick, not the one that fired
	if again := bounded(parent, time.Now(), timeout); again.Err() != nil || again.Done() == ctx.Done() {
		t.Fatal("a call after the tick fired shares it")
	}
	if bounded(parent, now, 9*tickWidth) != nil {
		t.Fatal("a timeout shorter than ten ticks is rounded")
	}
}

// TestBoundedTimeout: the context the middleware gives a store call ends at
// WithTimeout's bound, not before it, with DeadlineExceeded.
func TestBoundedTimeout(t *testing.T) {
	cfg := newConfig([]Option{WithTimeout(20 * time.Millisecond)})
	start := time.Now()
	ctx, cancel := cfg.bound(context.Background())
	defer cancel()
	<-ctx.Done()
	if el := time.Since(start); el < 20*time.Millisecond || el > 5*time.Second {
		t.Fatalf("bound ended after %v, want about 20 ms", el)
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v", ctx.Err())
	}
}

// BenchmarkBound measures what bounding one store call costs the
// middleware, against context.WithTimeout, on a request-like parent (a
// context that can be cancelled). A store call selects on Done, as Redis
// clients do.
func BenchmarkBound(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := newConfig(nil)
	b.Run("bound", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ctx, cancel := cfg.bound(parent)
				select {
				case <-ctx.Done():
				default:
				}
				cancel()
			}
		})
	})
	b.Run("context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ctx, cancel := context.WithTimeout(parent, DefaultTimeout)
				select {
				case <-ctx.Done():
				default:
				}
				cancel()
			}
		})
	})
}
