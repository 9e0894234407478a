package redisengine

import (
	"context"
	"strconv"
	"time"

	"github.com/ratekit/ratekit/reputation"
)

// Reputation runs one operation on tenant's reputation under p through c,
// in one call (lua/reputation.lua): mode is "violation", "good", "get" (no
// write) or "reset" (which returns the zero Reputation).
func (e *Engine) Reputation(ctx context.Context, c Conn, tenant string, p reputation.Policy, mode string) (reputation.Reputation, error) {
	if err := p.Validate(); err != nil {
		return reputation.Reputation{}, err
	}
	key, err := e.ReputationKey(tenant, p)
	if err != nil {
		return reputation.Reputation{}, err
	}
	cmd := &Command{head: []string{mode, fmtFloat(p.Penalty), itoa(p.Established), fmtFloat(p.GoodStep),
		fmtFloat(p.SlowStep), fmtFloat(p.HourlyRecovery), itoa(p.Quiet.Microseconds())}}
	cmd.k[0] = key
	cmd.Keys = cmd.k[:1]
	reply, err := e.run(ctx, c, progReputation, cmd)
	if err != nil || mode == "reset" {
		return reputation.Reputation{}, err
	}
	return e.parseReputation(reply)
}

// ReputationKey returns the Redis key of tenant's reputation under p,
// <prefix>:{<tag>}:<name>:reputation:<fingerprint>: in the tenant's cluster
// slot, beside its limits' keys.
func (e *Engine) ReputationKey(tenant string, p reputation.Policy) (string, error) {
	t, err := Tag(tenant)
	if err != nil {
		return "", err
	}
	return e.key(t, p.ID(), ""), nil
}

// fmtFloat is the shortest decimal that Lua's tonumber reads back as f.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// parseReputation checks the reply of lua/reputation.lua element by element.
func (e *Engine) parseReputation(reply any) (reputation.Reputation, error) {
	vals, ok := reply.([]any)
	if !ok || len(vals) != 6 {
		return reputation.Reputation{}, e.errorf("unexpected reputation reply %T of %d elements", reply, len(vals))
	}
	str, ok := vals[0].(string)
	score, err := strconv.ParseFloat(str, 64)
	if !ok || err != nil || !(score >= 0 && score <= 1) {
		return reputation.Reputation{}, e.errorf("reputation score %v is not a number in [0, 1]", vals[0])
	}
	var n [5]int64
	for i := range n {
		v, ok := vals[i+1].(int64)
		if !ok || v < 0 {
			return reputation.Reputation{}, e.errorf("reputation reply element %d is %v, want an integer ≥ 0", i+1, vals[i+1])
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

// Extras implements reputation.Store with an Engine and a Conn, for a store
// to embed; errors go through Options.Explain. It is safe for concurrent use
// when its Engine and Conn are; the zero Extras is not usable.
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
