package fallback

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// Store is a ratekit.Store that decides through a primary store and, while
// the primary fails, through a local one with per-instance limits, behind a
// circuit breaker (see the package documentation). Pass it to ratekit.New as
// any store; Middleware, the framework adapters and levels then fall back
// with it.
//
// The zero Store is not usable: build one with New. A Store is safe for
// concurrent use. It starts no goroutine of its own except its probes, each
// of which ends within Config.ProbeTimeout, so it needs no Close.
type Store struct {
	primary, local ratekit.Store
	cfg            Config
	scaled         scaler
	b              breaker
	probes         sync.WaitGroup // probes in flight (tests wait for them)
}

var _ ratekit.Store = (*Store)(nil)

// New returns a Store that asks primary (the store the instances share,
// e.g. a redisstore.Store) and falls back to local (memstore.New()). It
// reports a nil store, the same store passed twice, and every Config field
// out of range.
func New(primary, local ratekit.Store, cfg Config) (*Store, error) {
	return newStore(primary, local, cfg, time.Now)
}

func newStore(primary, local ratekit.Store, cfg Config, now func() time.Time) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err = errors.Join(checkStores(primary, local), err); err != nil {
		return nil, err
	}
	s := &Store{primary: primary, local: local, cfg: cfg, scaled: newScaler(cfg.Instances)}
	s.b = breaker{threshold: int64(cfg.Failures), retry: cfg.Retry, onChange: cfg.OnChange, now: now}
	return s, nil
}

// Open reports whether the breaker is open: calls are decided by the local
// store without asking the primary, until a probe finds the primary back.
// It is safe for concurrent use; the answer may change at any time.
func (s *Store) Open() bool { return s.b.open.Load() }

// Take implements ratekit.Store: the primary's decision while it answers,
// else the local store's with Decision.Fallback set.
func (s *Store) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	return s.decide(ctx, key, limits, cost, opTake)
}

// Peek implements ratekit.Store as Take does, changing no state.
func (s *Store) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	return s.decide(ctx, key, limits, 1, opPeek)
}

// Reset implements ratekit.Store: it forgets key's state for limits in the
// local store and in the primary, whatever the breaker's state, and returns
// the primary's error if any (else the local store's). A reset the primary
// missed leaves its state, blocks included, to expire on its own.
func (s *Store) Reset(ctx context.Context, key string, limits []ratekit.Limit) error {
	lerr := s.local.Reset(context.WithoutCancel(ctx), key, s.scaled.limits(limits))
	if err := s.primary.Reset(ctx, key, limits); err != nil {
		return err
	}
	return lerr
}

func (s *Store) decide(ctx context.Context, key string, limits []ratekit.Limit, cost int64, o op) (ratekit.Decision, error) {
	if s.b.open.Load() {
		s.maybeProbe(key, limits)
		return s.fallback(ctx, key, limits, cost, o)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The caller's budget is spent before the primary was asked: decide
		// locally, and count nothing against the primary.
		return s.fallback(ctx, key, limits, cost, o)
	}
	d, err := ask(ctx, s.primary, key, limits, cost, o)
	if err == nil {
		s.b.succeeded()
		return d, nil
	}
	if requestError(err) || errors.Is(ctx.Err(), context.Canceled) {
		return ratekit.Decision{}, err
	}
	s.b.failed(err)
	d, lerr := s.fallback(ctx, key, limits, cost, o)
	switch {
	case lerr == nil:
		return d, nil
	case requestError(lerr): // the request's own fault, which the primary did not get to report
		return ratekit.Decision{}, lerr
	}
	return ratekit.Decision{}, fmt.Errorf("%w (the local store failed too: %v)", err, lerr)
}

// fallback decides in the local store with the scaled limits.
func (s *Store) fallback(ctx context.Context, key string, limits []ratekit.Limit, cost int64, o op) (ratekit.Decision, error) {
	d, err := ask(context.WithoutCancel(ctx), s.local, key, s.scaled.limits(limits), cost, o)
	if err != nil {
		return ratekit.Decision{}, err
	}
	d.Fallback = true
	if d.Receipt != nil {
		d.Receipt.Fallback = true
	}
	return d, nil
}

// An op is what a call asks a store.
type op uint8

const (
	opTake op = iota
	opPeek
	opReserve
)

func ask(ctx context.Context, st ratekit.Store, key string, limits []ratekit.Limit, cost int64, o op) (ratekit.Decision, error) {
	switch o {
	case opPeek:
		return st.Peek(ctx, key, limits)
	case opReserve:
		se, ok := st.(store.Settler)
		if !ok {
			return ratekit.Decision{}, errNotSettler
		}
		return se.Reserve(ctx, key, limits, cost)
	}
	return st.Take(ctx, key, limits, cost)
}

// requestError reports an error the call's own arguments caused, which the
// local store would return as well: it says nothing about the primary.
func requestError(err error) bool {
	return errors.Is(err, ratekit.ErrEmptyKey) || errors.Is(err, ratekit.ErrInvalidCost) || errors.Is(err, ratekit.ErrInvalidLimit)
}
