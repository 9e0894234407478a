package redisstore

import (
	"context"
	"time"

	"github.com/ratekit/ratekit/reputation"
)

// RecordViolation implements reputation.Store.
func (s *Store) RecordViolation(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.reputation(ctx, tenant, p, "violation")
}

// RecordGood implements reputation.Store.
func (s *Store) RecordGood(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.reputation(ctx, tenant, p, "good")
}

// Reputation implements reputation.Store.
func (s *Store) Reputation(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.reputation(ctx, tenant, p, "get")
}

// ResetReputation implements reputation.Store.
func (s *Store) ResetReputation(ctx context.Context, tenant string, p reputation.Policy) error {
	_, err := s.reputation(ctx, tenant, p, "reset")
	return err
}

// ReputationKey returns the Redis key of tenant's reputation under p,
// <prefix>:{<tag>}:<name>:reputation:<fingerprint>: in the tenant's cluster
// slot, beside its limits' keys.
func (s *Store) ReputationKey(tenant string, p reputation.Policy) (string, error) {
	return s.eng.ReputationKey(tenant, p)
}

func (s *Store) reputation(ctx context.Context, tenant string, p reputation.Policy, mode string) (reputation.Reputation, error) {
	start := time.Now()
	r, err := s.eng.Reputation(ctx, (*conn)(s), tenant, p, mode)
	return r, s.explain(ctx, start, err)
}
