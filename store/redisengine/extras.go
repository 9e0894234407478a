package redisengine

import (
	"context"
	"time"

	"github.com/ratekit/ratekit/reputation"
)

// Extras implements reputation.Store with an Engine and a Conn, so that a
// client module gets it by embedding Extras in its store; errors go
// through the Engine's Options.Explain. An Extras is a plain value, safe
// for concurrent use when its Engine and Conn are; the zero Extras is not
// usable.
type Extras struct {
	Engine *Engine
	Conn   Conn
}

var _ reputation.Store = Extras{}

// RecordViolation implements reputation.Store.
func (x Extras) RecordViolation(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return x.reputation(ctx, tenant, p, "violation")
}

// RecordGood implements reputation.Store.
func (x Extras) RecordGood(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return x.reputation(ctx, tenant, p, "good")
}

// Reputation implements reputation.Store.
func (x Extras) Reputation(ctx context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return x.reputation(ctx, tenant, p, "get")
}

// ResetReputation implements reputation.Store.
func (x Extras) ResetReputation(ctx context.Context, tenant string, p reputation.Policy) error {
	_, err := x.reputation(ctx, tenant, p, "reset")
	return err
}

// ReputationKey is Engine.ReputationKey.
func (x Extras) ReputationKey(tenant string, p reputation.Policy) (string, error) {
	return x.Engine.ReputationKey(tenant, p)
}

func (x Extras) reputation(ctx context.Context, tenant string, p reputation.Policy, mode string) (reputation.Reputation, error) {
	start := time.Now()
	r, err := x.Engine.Reputation(ctx, x.Conn, tenant, p, mode)
	return r, x.Engine.explain(ctx, start, err)
}
