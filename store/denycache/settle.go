package denycache

import (
	"context"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/store"
)

// settling is a prepared form whose inner form can settle.
type settling struct {
	*prepared
	inner store.Settler
}

var _ store.Settler = (*settling)(nil)

// Reserve is Take, asking the inner store to reserve; a denial is cached
// as Take's.
func (p *settling) Reserve(ctx context.Context, key string, cost int64) (ratekit.Decision, error) {
	return p.decide(ctx, key, cost, func() (ratekit.Decision, error) { return p.inner.Reserve(ctx, key, cost) })
}

// Settle settles through the inner store. A refund forgets key's cached
// denials of every set that shares a limit with these limits: the refund
// may let them pass sooner.
func (p *settling) Settle(ctx context.Context, key string, r *ratekit.Receipt, cost int64) error {
	refund := r != nil && cost < r.Cost
	err := p.inner.Settle(ctx, key, r, cost)
	if refund && key != "" {
		sub := subject.Key(key)
		p.s.forget(p.s.shard(sub), sub, p.ids)
	}
	return err
}

// Renew renews through the inner store.
func (p *settling) Renew(ctx context.Context, key string, r *ratekit.Receipt) (bool, error) {
	return p.inner.Renew(ctx, key, r)
}
