package redisstore

import (
	"context"
	"time"

	"github.com/ratekit/ratekit/lockout"
)

// Lockout implements lockout.Store in one call: a log of attempts under
// <prefix>:{<tag>}:lockout:<id> and one block key per window beside it, all
// in the subject's slot.
func (s *Store) Lockout(ctx context.Context, key string, p *lockout.Policy, op lockout.Op, attempt string) (lockout.Decision, error) {
	start := time.Now()
	d, err := s.eng.Lockout(ctx, (*conn)(s), key, p, op, attempt)
	return d, s.explain(ctx, start, err)
}
