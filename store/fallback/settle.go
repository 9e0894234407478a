package fallback

import (
	"context"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// settling is a prepared form whose stores' forms can settle.
type settling struct {
	*prepared
	primary, local store.Settler
}

var _ store.Settler = (*settling)(nil)

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
		return p.local
	}
	return p.primary
}
