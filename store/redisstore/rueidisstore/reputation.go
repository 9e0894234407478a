package rueidisstore

import (
	"context"

	"github.com/ratekit/ratekit/reputation"
)

// RecordViolation implements reputation.Store: it records a violation by tenant under p.
func (s *Store) RecordViolation(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.rep.RecordViolation(ctx, tenant, p)
}

// RecordGood implements reputation.Store: it records good behaviour by tenant under p.
func (s *Store) RecordGood(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.rep.RecordGood(ctx, tenant, p)
}

// Reputation implements reputation.Store: tenant's reputation under p, unchanged.
func (s *Store) Reputation(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.rep.Reputation(ctx, tenant, p)
}

// ResetReputation implements reputation.Store: it forgets tenant's reputation under p.
func (s *Store) ResetReputation(ctx context.Context, tenant string, p reputation.Policy) error {
	return s.rep.ResetReputation(ctx, tenant, p)
}

// ReputationKey returns the Redis key of tenant's reputation under p, in the
// tenant's cluster slot.
func (s *Store) ReputationKey(tenant string, p reputation.Policy) (string, error) {
	return s.rep.ReputationKey(tenant, p)
}
