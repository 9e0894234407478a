package redisstore

import (
	"context"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// Reserve implements store.Settler: Take that records what an admitted
// call charged, in the same round trip.
func (s *Store) Reserve(ctx context.Context, key string, limits []ratekit.Limit, cost int64) (ratekit.Decision, error) {
	start := time.Now()
	d, err := s.eng.Reserve(ctx, (*conn)(s), key, limits, cost)
	return d, s.explain(ctx, start, err)
}

// Settle implements store.Settler in one round trip.
func (s *Store) Settle(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt, cost int64) error {
	start := time.Now()
	return s.explain(ctx, start, s.eng.Settle(ctx, (*conn)(s), key, limits, r, cost))
}

// Renew implements store.Settler in one round trip.
func (s *Store) Renew(ctx context.Context, key string, limits []ratekit.Limit, r *ratekit.Receipt) (bool, error) {
	start := time.Now()
	held, err := s.eng.Renew(ctx, (*conn)(s), key, limits, r)
	return held, s.explain(ctx, start, err)
}

var _ store.Settler = (*Store)(nil)
