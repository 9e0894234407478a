package redisstore

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/ratekit/ratekit/reputation"
	"github.com/redis/go-redis/v9"
)

//go:embed lua/reputation.lua
var reputationSource string

// reputationScript updates or reads one tenant's reputation.
var reputationScript = &script{src: reputationSource, sha: redis.NewScript(reputationSource).Hash()}

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
	t, err := tag(tenant)
	if err != nil {
		return "", err
	}
	return s.prefix + ":{" + t + "}:" + p.ID(), nil
}

func (s *Store) reputation(ctx context.Context, tenant string, p reputation.Policy, mode string) (reputation.Reputation, error) {
	c, err := s.policy(p)
	if err != nil {
		return reputation.Reputation{}, err
	}
	t, err := tag(tenant)
	if err != nil {
		return reputation.Reputation{}, err
	}
	args := make([]any, 0, 1+len(c.args))
	args = append(append(args, mode), c.args...)
	reply, err := s.run(ctx, reputationScript, []string{s.prefix + ":{" + t + "}:" + c.id}, args)
	if err != nil || mode == "reset" {
		return reputation.Reputation{}, err
	}
	return parseReputation(reply)
}

// compiledPolicy is a validated policy with its ID and script arguments.
type compiledPolicy struct {
	p    reputation.Policy
	id   string
	args []any
}

// policy validates p and prepares its ID and arguments, keeping the last
// policy so that a service with one policy does this once.
func (s *Store) policy(p reputation.Policy) (*compiledPolicy, error) {
	if c := s.lastPolicy.Load(); c != nil && c.p == p {
		return c, nil
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := &compiledPolicy{p: p, id: p.ID(), args: []any{fmtFloat(p.Penalty), p.Established, fmtFloat(p.GoodStep),
		fmtFloat(p.SlowStep), fmtFloat(p.HourlyRecovery), p.Quiet.Microseconds()}}
	s.lastPolicy.Store(c)
	return c, nil
}

// fmtFloat is the shortest decimal that Lua's tonumber reads back as f.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// parseReputation checks the reply of lua/reputation.lua element by element.
func parseReputation(reply any) (reputation.Reputation, error) {
	vals, ok := reply.([]any)
	if !ok || len(vals) != 6 {
		return reputation.Reputation{}, fmt.Errorf("ratekit: redisstore: unexpected reputation reply %T of %d elements", reply, lenOf(vals))
	}
	str, ok := vals[0].(string)
	score, err := strconv.ParseFloat(str, 64)
	if !ok || err != nil || !(score >= 0 && score <= 1) {
		return reputation.Reputation{}, fmt.Errorf("ratekit: redisstore: reputation score %v is not a number in [0, 1]", vals[0])
	}
	var n [5]int64
	for i := range n {
		v, ok := vals[i+1].(int64)
		if !ok || v < 0 {
			return reputation.Reputation{}, fmt.Errorf("ratekit: redisstore: reputation reply element %d is %v, want an integer ≥ 0", i+1, vals[i+1])
		}
		n[i] = v
	}
	r := reputation.Reputation{Score: score, Violations: n[0], Good: n[1], TTL: time.Duration(n[4]) * time.Millisecond}
	if n[2] > 0 {
		r.LastViolation = time.UnixMicro(n[2])
	}
	if n[3] > 0 {
		r.Updated = time.UnixMicro(n[3])
	}
	return r, nil
}
