package storetest

import (
	"math"
	"time"

	"github.com/ratekit/ratekit/reputation"
)

// repModel is the reference model of the reputation arithmetic, written
// from reputation.Policy's documentation and independently of both
// stores (its float operations are grouped differently, so it agrees with
// them to about 1e-15, not bit for bit).
type repModel struct {
	p        reputation.Policy
	live     bool
	score    float64
	v, g     int64
	lv, lu   int64 // µs; lv 0: no violation yet
	expireMS int64
}

func newRepModel(p reputation.Policy) *repModel { return &repModel{p: p} }

// expire forgets the state once its TTL has passed (a key lives through its
// expiry millisecond, as in Redis).
func (m *repModel) expire(nowUS int64) {
	if m.live && m.expireMS < nowUS/1000 {
		*m = repModel{p: m.p}
	}
}

// recovered is the score with time-based recovery up to nowUS.
func (m *repModel) recovered(nowUS int64) float64 {
	if m.score >= 1 {
		return m.score
	}
	start := m.lu
	if q := m.lv + m.p.Quiet.Microseconds(); q > start {
		start = q
	}
	if nowUS <= start {
		return m.score
	}
	hours := float64(nowUS-start) / float64(time.Hour/time.Microsecond)
	return math.Min(1, m.score+m.p.HourlyRecovery*hours)
}

func (m *repModel) begin(nowUS int64) {
	m.expire(nowUS)
	if !m.live {
		m.live, m.score, m.v, m.g, m.lv, m.lu = true, 1, 0, 0, 0, nowUS
	}
	m.score = m.recovered(nowUS)
}

func (m *repModel) finish(nowUS int64) reputation.Reputation {
	m.lu = nowUS
	ttl := 30 * time.Minute
	if m.score < 0.1 {
		ttl = 4 * time.Hour
	} else if m.score < 0.3 {
		ttl = 2 * time.Hour
	} else if m.score < 0.7 {
		ttl = time.Hour
	}
	if m.v >= 10 {
		ttl *= 2
	}
	m.expireMS = nowUS/1000 + ttl.Milliseconds()
	return m.view(ttl)
}

func (m *repModel) violation(nowUS int64) reputation.Reputation {
	m.begin(nowUS)
	established := math.Min(float64(m.g), float64(m.p.Established))
	impact := m.p.Penalty * (1 - 0.5*established/float64(m.p.Established))
	m.v++
	if m.v >= 10 {
		impact *= 2
	} else if m.v >= 5 {
		impact *= 1.5
	}
	if m.lv != 0 && nowUS-m.lv < int64(time.Second/time.Microsecond) {
		impact *= 1.2
	}
	m.score = math.Max(0, m.score-impact)
	m.lv = nowUS
	return m.finish(nowUS)
}

func (m *repModel) good(nowUS int64) reputation.Reputation {
	m.begin(nowUS)
	m.g++
	step := m.p.GoodStep
	if m.v > 0 {
		step = m.p.SlowStep / float64(m.v)
	}
	m.score = math.Min(1, m.score+step)
	return m.finish(nowUS)
}

func (m *repModel) get(nowUS int64) reputation.Reputation {
	m.expire(nowUS)
	if !m.live {
		return reputation.Reputation{Score: 1}
	}
	r := m.view(time.Duration(m.expireMS-nowUS/1000) * time.Millisecond)
	r.Score = m.recovered(nowUS)
	return r
}

func (m *repModel) view(ttl time.Duration) reputation.Reputation {
	r := reputation.Reputation{Score: m.score, Violations: m.v, Good: m.g, Updated: time.UnixMicro(m.lu), TTL: ttl}
	if m.lv != 0 {
		r.LastViolation = time.UnixMicro(m.lv)
	}
	return r
}
