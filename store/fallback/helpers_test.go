package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// errRefused is the primary's failure while it is refused.
var errRefused = errors.New("ratekit: teststore: dial tcp 127.0.0.1:6379: connect: connection refused")

// The states of a test primary.
const (
	up      = iota
	refused // every call fails at once
	hung    // every call waits for its context to end
)

// primary is a controllable primary store: while up it decides through an
// in-process store; refused, it fails at once; hung, it waits for the
// call's context. It counts the calls it gets, and can hold Peeks (probes)
// at a gate.
type primary struct {
	inner                ratekit.Store
	state                atomic.Int32
	takes, peeks, resets atomic.Int64
	gate                 chan struct{} // when set before use, every Peek waits for it to close
	entered              chan struct{} // when set before use, every Peek sends on it first
	inPeek, maxInPeek    atomic.Int64
}

func (p *primary) fail(ctx context.Context) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("ratekit: teststore: %w", ctx.Err())
	case p.state.Load() == refused:
		return errRefused
	case p.state.Load() == hung:
		<-ctx.Done()
		return fmt.Errorf("ratekit: teststore: %w", ctx.Err())
	}
	return nil
}

func (s *primary) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (p *primary) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	p.takes.Add(1)
	if err := p.fail(ctx); err != nil {
		return ratekit.Decision{}, err
	}
	return storetest.Take(ctx, p.inner, key, limits, cost)
}

func (p *primary) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	p.peeks.Add(1)
	n := p.inPeek.Add(1)
	defer p.inPeek.Add(-1)
	for m := p.maxInPeek.Load(); n > m && !p.maxInPeek.CompareAndSwap(m, n); m = p.maxInPeek.Load() {
	}
	if p.entered != nil {
		p.entered <- struct{}{}
	}
	if p.gate != nil {
		<-p.gate
	}
	if err := p.fail(ctx); err != nil {
		return ratekit.Decision{}, err
	}
	return storetest.Peek(ctx, p.inner, key, limits)
}

func (p *primary) Reset(ctx context.Context, key string, limits []ratekit.Limit) error {
	p.resets.Add(1)
	if err := p.fail(ctx); err != nil {
		return err
	}
	return storetest.Reset(ctx, p.inner, key, limits)
}

// local wraps the local store: it counts its calls and records whether one
// came with a context that had ended.
type local struct {
	ratekit.Store
	takes, peeks atomic.Int64
	sawDone      atomic.Bool
}

func (s *local) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

func (l *local) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	l.takes.Add(1)
	l.sawDone.Store(l.sawDone.Load() || ctx.Err() != nil)
	return storetest.Take(ctx, l.Store, key, limits, cost)
}

func (l *local) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	l.peeks.Add(1)
	l.sawDone.Store(l.sawDone.Load() || ctx.Err() != nil)
	return storetest.Peek(ctx, l.Store, key, limits)
}

// change is one call of Config.OnChange.
type change struct {
	open bool
	err  error
}

// rig is a fallback.Store over a test primary and a local memstore, all on
// one fake clock.
type rig struct {
	clock   *storetest.Clock
	primary *primary
	local   *local
	store   *fallback.Store
	mu      sync.Mutex
	changes []change
}

func newRig(t *testing.T, cfg fallback.Config) *rig {
	t.Helper()
	r := &rig{clock: storetest.NewClock(time.Unix(1_700_000_000, 0))}
	r.primary = &primary{inner: memstore.New(memstore.WithClock(r.clock.Now))}
	r.local = &local{Store: memstore.New(memstore.WithClock(r.clock.Now))}
	cfg.OnChange = func(open bool, err error) {
		r.mu.Lock()
		r.changes = append(r.changes, change{open, err})
		r.mu.Unlock()
	}
	s, err := fallback.NewWithClock(r.primary, r.local, cfg, r.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	r.store = s
	t.Cleanup(func() { fallback.WaitProbes(s) })
	return r
}

func (r *rig) changeLog() []change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]change(nil), r.changes...)
}

// take calls Take with cost 1 and fails the test on an error.
func (r *rig) take(t *testing.T, key string, limits ...ratekit.Limit) ratekit.Decision {
	t.Helper()
	d, err := storetest.Take(context.Background(), r.store, key, limits, 1)
	if err != nil {
		t.Fatalf("Take(%q): %v", key, err)
	}
	return d
}

// api is the limit most tests use.
var api = ratekit.FixedWindow(100, time.Minute).Named("api")
