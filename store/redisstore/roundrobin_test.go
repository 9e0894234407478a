package redisstore_test

import (
	"context"
	"sync/atomic"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/lockout"
)

// roundRobin spreads calls over several stores, as instances of a service
// behind a load balancer would.
func roundRobin(stores []ratekit.Store) *rr { return &rr{stores: stores} }

type rr struct {
	stores []ratekit.Store
	next   atomic.Int64
}

func (r *rr) pick() ratekit.Store { return r.stores[int(r.next.Add(1))%len(r.stores)] }

func (r *rr) Take(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	return r.pick().Take(ctx, key, limits, cost)
}
func (r *rr) Peek(ctx context.Context, key string, limits []ratekit.Limit) (ratekit.Decision, error) {
	return r.pick().Peek(ctx, key, limits)
}
func (r *rr) Reset(ctx context.Context, key string, limits []ratekit.Limit) error {
	return r.pick().Reset(ctx, key, limits)
}
func (r *rr) Lockout(ctx context.Context, key string, p *lockout.Policy, op lockout.Op, attempt string) (lockout.Decision, error) {
	return r.pick().(lockout.Store).Lockout(ctx, key, p, op, attempt)
}
