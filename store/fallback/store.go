package fallback

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/store"
)

// Store is a ratekit.Store that decides through a primary store and, while
// the primary fails, through a local one with per-instance limits.
//
// The zero Store is not usable: build one with New. A Store is safe for
// concurrent use; its only goroutines are probes, which end within
// Config.ProbeTimeout, so it needs no Close.
type Store struct {
	primary, local ratekit.Store
	cfg            Config
	now            func() time.Time // the clock probes are timed by

	// The circuit breaker (breaker.go): atomic, so a call never waits.
	failures  atomic.Int64 // consecutive failed calls since the last success
	open      atomic.Bool
	probing   atomic.Bool    // a probe is in flight
	nextProbe atomic.Int64   // UnixNano of now() before which no probe starts
	probes    sync.WaitGroup // probes in flight (tests wait for them)
}

var _ ratekit.Store = (*Store)(nil)

// New returns a Store that asks primary (the store the instances share)
// and falls back to local (memstore.New()). It reports a nil store, the
// same store passed twice, and every Config field out of range.
func New(primary, local ratekit.Store, cfg Config) (*Store, error) {
	return newStore(primary, local, cfg, time.Now)
}

func newStore(primary, local ratekit.Store, cfg Config, now func() time.Time) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err = errors.Join(checkStores(primary, local), err); err != nil {
		return nil, err
	}
	return &Store{primary: primary, local: local, cfg: cfg, now: now}, nil
}

// Open reports whether the breaker is open: calls are decided by the local
// store without asking the primary, until a probe finds the primary back.
func (s *Store) Open() bool { return s.open.Load() }

// Prepare implements ratekit.Store: it prepares limits on the primary
// store and their instance's share (see Config.Instances) on the local
// one. The form is a store.Settler when both stores' forms are.
func (s *Store) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	primary, err := s.primary.Prepare(limits)
	if err != nil {
		return nil, err
	}
	local, err := s.local.Prepare(scaled(limits, int64(s.cfg.Instances)))
	if err != nil {
		return nil, err
	}
	p := &prepared{s: s, primary: primary, local: local}
	_, ok1 := primary.(store.Settler)
	_, ok2 := local.(store.Settler)
	if ok1 && ok2 {
		return &settling{p}, nil
	}
	return p, nil
}

// scaled returns limits at one instance's share of n, or limits when n
// is 1.
func scaled(limits []ratekit.Limit, n int64) []ratekit.Limit {
	if n == 1 {
		return limits
	}
	out := make([]ratekit.Limit, len(limits))
	for i, l := range limits {
		out[i] = Share(l, n)
	}
	return out
}

// Share returns one of n instances' share of l, as the fallback store
// decides it: quotas, bursts and capacities divided by n, rounded down but
// at least 1, rates divided by n, everything else kept, the storage
// identity too (other numbers, one limit). A custom limit, or one whose
// share would be invalid, is returned as it is.
func Share(l ratekit.Limit, n int64) ratekit.Limit {
	sp := algo.Spec(l.Spec())
	if n <= 1 || !algo.Of(sp.Algorithm).Share(&sp, n) {
		return l
	}
	if s, err := l.With(ratekit.Spec(sp)); err == nil {
		return s
	}
	return l
}

// prepared is one set of limits on a Store.
type prepared struct {
	s              *Store
	primary, local ratekit.Prepared
}

// settling is a prepared form whose stores' forms can settle.
type settling struct{ *prepared }

var _ store.Settler = (*settling)(nil)

// Take asks the primary store, or the local one while the circuit is open
// or when the primary fails (see the package doc).
func (p *prepared) Take(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	return p.decide(ctx, key, func(ctx context.Context, st ratekit.Prepared) (ratekit.Decision, error) {
		return st.Take(ctx, key, cost)
	})
}

// Peek is Take's Peek.
func (p *prepared) Peek(ctx context.Context, key string) (ratekit.Decision, error) {
	return p.decide(ctx, key, func(ctx context.Context, st ratekit.Prepared) (ratekit.Decision, error) {
		return st.Peek(ctx, key)
	})
}

// Reserve is Take's Reserve: the Receipt of a charge made locally is marked
// Fallback, and settles there.
func (p *settling) Reserve(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	return p.decide(ctx, key, func(ctx context.Context, st ratekit.Prepared) (ratekit.Decision, error) {
		return st.(store.Settler).Reserve(ctx, key, cost)
	})
}

// Settle settles r in the store that charged it.
func (p *settling) Settle(ctx context.Context, key string, r *ratekit.Receipt, cost int64) error {
	return p.settler(r).Settle(ctx, key, r, cost)
}

// Renew renews r in the store that charged it.
func (p *settling) Renew(ctx context.Context, key string, r *ratekit.Receipt) (bool, error) {
	return p.settler(r).Renew(ctx, key, r)
}

// settler is the store that charged r.
func (p *settling) settler(r *ratekit.Receipt) store.Settler {
	if r != nil && r.Fallback {
		return p.local.(store.Settler)
	}
	return p.primary.(store.Settler)
}

// Reset resets both stores; the primary's error is the one reported.
func (p *prepared) Reset(ctx context.Context, key string) error {
	lerr := p.local.Reset(context.WithoutCancel(ctx), key)
	if err := p.primary.Reset(ctx, key); err != nil {
		return err
	}
	return lerr
}

// decide asks the primary store with ask, or the local one.
func (p *prepared) decide(ctx context.Context, key string, ask func(context.Context, ratekit.Prepared) (ratekit.Decision, error)) (ratekit.Decision, error) {
	s := p.s
	if s.open.Load() {
		s.maybeProbe(key, p.primary)
		return p.fallback(ctx, ask)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return p.fallback(ctx, ask)
	}
	d, err := ask(ctx, p.primary)
	if err == nil {
		s.succeeded()
		return d, nil
	}
	if requestError(err) || errors.Is(ctx.Err(), context.Canceled) {
		return ratekit.Decision{}, err
	}
	s.failed(err)
	d, lerr := p.fallback(ctx, ask)
	switch {
	case lerr == nil:
		return d, nil
	case requestError(lerr): // the request's own fault, which the primary did not get to report
		return ratekit.Decision{}, lerr
	}
	return ratekit.Decision{}, fmt.Errorf("%w (the local store failed too: %v)", err, lerr)
}

// fallback asks the local store, marking its answer.
func (p *prepared) fallback(ctx context.Context, ask func(context.Context, ratekit.Prepared) (ratekit.Decision, error)) (ratekit.Decision, error) {
	d, err := ask(context.WithoutCancel(ctx), p.local)
	if err != nil {
		return ratekit.Decision{}, err
	}
	d.Fallback = true
	if d.Receipt != nil {
		d.Receipt.Fallback = true
	}
	return d, nil
}

// requestError reports an error the call's own arguments caused, which the
// local store would return as well: it says nothing about the primary.
func requestError(err error) bool {
	return errors.Is(err, ratekit.ErrEmptyKey) || errors.Is(err, ratekit.ErrInvalidCost) || errors.Is(err, ratekit.ErrInvalidLimit)
}
