package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// Take prepares limits on s and takes cost for key: a decision in one call,
// as tests write it. An error of Prepare is Take's.
func Take(ctx context.Context, s ratekit.Store, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	p, err := s.Prepare(limits)
	if err != nil {
		return ratekit.Decision{}, err
	}
	return p.Take(ctx, key, cost)
}

// Peek is Take's Peek.
func Peek(ctx context.Context, s ratekit.Store, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	p, err := s.Prepare(limits)
	if err != nil {
		return ratekit.Decision{}, err
	}
	return p.Peek(ctx, key)
}

// Reset is Take's Reset.
func Reset(ctx context.Context, s ratekit.Store, key string, limits []ratekit.Limit) error {
	p, err := s.Prepare(limits)
	if err != nil {
		return err
	}
	return p.Reset(ctx, key)
}

// errNoSettler is the error of Reserve, Settle and Renew on a store whose
// prepared form cannot settle.
var errNoSettler = errors.New("storetest: the store cannot settle these limits (its prepared form is no store.Settler)")

// settler prepares limits on s as a store.Settler.
func settler(s ratekit.Store, limits []ratekit.Limit) (store.Settler, error) {
	p, err := s.Prepare(limits)
	if err != nil {
		return nil, err
	}
	st, ok := p.(store.Settler)
	if !ok {
		return nil, errNoSettler
	}
	return st, nil
}

// Reserve is Take's Reserve.
func Reserve(ctx context.Context, s ratekit.Store, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	st, err := settler(s, limits)
	if err != nil {
		return ratekit.Decision{}, err
	}
	return st.Reserve(ctx, key, cost)
}

// Settle is Take's Settle.
func Settle(ctx context.Context, s ratekit.Store, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error {
	st, err := settler(s, limits)
	if err != nil {
		return err
	}
	return st.Settle(ctx, key, r, cost)
}

// Renew is Take's Renew.
func Renew(ctx context.Context, s ratekit.Store, key string, limits []ratekit.Limit, r *ratekit.Receipt) (bool, error) {
	st, err := settler(s, limits)
	if err != nil {
		return false, err
	}
	return st.Renew(ctx, key, r)
}

// Settles reports whether s's prepared form of limits is a store.Settler.
func Settles(s ratekit.Store, limits ...ratekit.Limit) bool {
	_, err := settler(s, limits)
	return err == nil
}

// FromCalls returns a ratekit.Store for a test's fake store c (one that
// fails, counts or waits), written in the form where each call names its
// limits: c's methods Take(ctx, key, limits, cost), Peek(ctx, key, limits),
// Reset(ctx, key, limits), Reserve(ctx, key, limits, cost),
// Settle(ctx, key, limits, r, cost) and Renew(ctx, key, limits, r) answer
// where c has them, and inner's prepared form (when inner is not nil)
// where it does not. The prepared form is a store.Settler when c has
// Reserve or inner's is one; the store is a store.NonBlocking when c has a
// NonBlocking method.
func FromCalls(c any, inner ratekit.Store) ratekit.Store {
	s := fromCalls{c: c, inner: inner}
	if nb, ok := c.(interface{ NonBlocking() bool }); ok {
		return nonBlocking{s, nb.NonBlocking()}
	}
	return s
}

type (
	taker interface {
		Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error)
	}
	peeker interface {
		Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error)
	}
	resetter interface {
		Reset(ctx context.Context, key string, limits []ratekit.Limit) error
	}
	reserver interface {
		Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error)
	}
	settler5 interface {
		Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error
	}
	renewer interface {
		Renew(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt) (bool, error)
	}
)

type fromCalls struct {
	c     any
	inner ratekit.Store
}

type nonBlocking struct {
	fromCalls
	nb bool
}

func (s nonBlocking) NonBlocking() bool { return s.nb }

func (s fromCalls) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	p := &called{c: s.c, limits: limits}
	if s.inner != nil {
		in, err := s.inner.Prepare(limits)
		if err != nil {
			return nil, err
		}
		p.inner = in
	}
	_, reserves := s.c.(reserver)
	if _, ok := p.inner.(store.Settler); ok || reserves {
		return &settleCalled{p}, nil
	}
	return p, nil
}

type called struct {
	c      any
	limits []ratekit.Limit
	inner  ratekit.Prepared
}

func (p *called) Take(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	if t, ok := p.c.(taker); ok {
		return t.Take(ctx, key, p.limits, cost)
	}
	return p.inner.Take(ctx, key, cost)
}

func (p *called) Peek(ctx context.Context, key string) (ratekit.Decision, error) {
	if t, ok := p.c.(peeker); ok {
		return t.Peek(ctx, key, p.limits)
	}
	return p.inner.Peek(ctx, key)
}

func (p *called) Reset(ctx context.Context, key string) error {
	if t, ok := p.c.(resetter); ok {
		return t.Reset(ctx, key, p.limits)
	}
	return p.inner.Reset(ctx, key)
}

type settleCalled struct{ *called }

func (p *settleCalled) Reserve(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	if t, ok := p.c.(reserver); ok {
		return t.Reserve(ctx, key, p.limits, cost)
	}
	return p.inner.(store.Settler).Reserve(ctx, key, cost)
}

func (p *settleCalled) Settle(ctx context.Context, key string, r *ratekit.Receipt, cost int64) error {
	if t, ok := p.c.(settler5); ok {
		return t.Settle(ctx, key, p.limits, r, cost)
	}
	return p.inner.(store.Settler).Settle(ctx, key, r, cost)
}

func (p *settleCalled) Renew(ctx context.Context, key string, r *ratekit.Receipt) (bool, error) {
	if t, ok := p.c.(renewer); ok {
		return t.Renew(ctx, key, p.limits, r)
	}
	return p.inner.(store.Settler).Renew(ctx, key, r)
}

// MustPrepare prepares limits on s, failing tb on an error.
func MustPrepare(tb testing.TB, s ratekit.Store, limits ...ratekit.Limit) ratekit.Prepared {
	tb.Helper()
	p, err := s.Prepare(limits)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
