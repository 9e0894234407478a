package memstore

import (
	"context"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/reputation"
)

// repState is one tenant's reputation, the fields of the Redis hash of
// store/redisengine/lua/reputation.lua.
type repState struct {
	score                      float64
	violations, good           int64
	lastViolationUS, updatedUS int64
	expireMS                   int64 // like a Redis key's expiry time
}

type repMode uint8

const (
	repGet repMode = iota
	repViolation
	repGood
	repReset
)

// RecordViolation implements reputation.Store.
func (s *Store) RecordViolation(_ context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.reputation(tenant, p, repViolation)
}

// RecordGood implements reputation.Store.
func (s *Store) RecordGood(_ context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.reputation(tenant, p, repGood)
}

// Reputation implements reputation.Store.
func (s *Store) Reputation(_ context.Context, tenant string, p reputation.Policy) (reputation.Reputation, error) {
	return s.reputation(tenant, p, repGet)
}

// ResetReputation implements reputation.Store.
func (s *Store) ResetReputation(_ context.Context, tenant string, p reputation.Policy) error {
	_, err := s.reputation(tenant, p, repReset)
	return err
}

// reputation mirrors lua/reputation.lua of store/redisengine operation for
// operation (hence the explicit float64 roundings): bit-identical scores.
func (s *Store) reputation(tenant string, p reputation.Policy, mode repMode) (reputation.Reputation, error) {
	if tenant == "" {
		return reputation.Reputation{}, ratekit.ErrEmptyKey
	}
	if err := p.Validate(); err != nil {
		return reputation.Reputation{}, err
	}
	nowUS := s.clock()
	nowMS := nowUS / 1000
	sub, sh := s.lock(tenant, nowMS)
	defer sh.mu.Unlock()
	k := entryKey{sub, p.ID()}
	r, ok := sh.reps[k]
	if mode == repReset || ok && r.expireMS < nowMS {
		s.forgetRep(sh, k)
		ok = false
	}
	switch {
	case mode == repReset:
		return reputation.Reputation{}, nil
	case !ok && mode == repGet:
		return reputation.Reputation{Score: 1}, nil
	case !ok:
		r = repState{score: 1, updatedUS: nowUS}
	}
	if r.score < 1 { // recovery since the later of the last update and the quiet period's end
		from := max(r.updatedUS, r.lastViolationUS+p.Quiet.Microseconds())
		if nowUS > from {
			r.score = min(1, r.score+float64(p.HourlyRecovery*(float64(nowUS-from)/3600000000)))
		}
	}
	switch mode {
	case repGet:
		return r.view(r.expireMS - nowMS), nil
	case repViolation:
		est := float64(p.Established)
		base := p.Penalty * (1 - float64(0.5*(float64(min(r.good, p.Established))/est)))
		r.violations++
		esc := 1.0
		switch {
		case r.violations >= 10:
			esc = 2
		case r.violations >= 5:
			esc = 1.5
		}
		rapid := 1.0
		if r.lastViolationUS > 0 && nowUS-r.lastViolationUS < 1000000 {
			rapid = 1.2
		}
		r.score = max(0, r.score-float64(float64(base*esc)*rapid))
		r.lastViolationUS = nowUS
	case repGood:
		r.good++
		step := p.GoodStep
		if r.violations > 0 {
			step = p.SlowStep / float64(r.violations)
		}
		r.score = min(1, r.score+step)
	}
	r.updatedUS = nowUS
	ttl := reputation.TTL(r.score, r.violations).Milliseconds()
	r.expireMS = nowMS + ttl
	if !ok && !s.admit(sh, "", nowMS, func() int { return 1 }) {
		return reputation.Reputation{}, ErrFull
	}
	k.subject = strings.Clone(k.subject) // see slotOf
	sh.reps[k] = r
	sh.minExpireMS = min(sh.minExpireMS, r.expireMS)
	sh.peakReps = max(sh.peakReps, len(sh.reps))
	return r.view(ttl), nil
}

// forgetRep deletes the reputation under k, if any. The caller holds sh.mu.
func (s *Store) forgetRep(sh *shard, k entryKey) {
	n := len(sh.reps)
	delete(sh.reps, k)
	s.count.Add(int64(len(sh.reps) - n))
}

func (r repState) view(ttlMS int64) reputation.Reputation {
	v := reputation.Reputation{Score: r.score, Violations: r.violations, Good: r.good,
		Updated: time.UnixMicro(r.updatedUS), TTL: time.Duration(ttlMS) * time.Millisecond}
	if r.lastViolationUS > 0 {
		v.LastViolation = time.UnixMicro(r.lastViolationUS)
	}
	return v
}
