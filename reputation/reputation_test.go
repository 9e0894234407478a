package reputation_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit/reputation"
)

func TestReputationPolicyValidate(t *testing.T) {
	if err := reputation.DefaultPolicy().Validate(); err != nil {
		t.Fatalf("default policy: %v", err)
	}
	cases := map[string]func(p *reputation.Policy){
		"zero value":        func(p *reputation.Policy) { *p = reputation.Policy{} },
		"name with space":   func(p *reputation.Policy) { p.Name = "a b" },
		"penalty 0":         func(p *reputation.Policy) { p.Penalty = 0 },
		"penalty above 1":   func(p *reputation.Policy) { p.Penalty = 1.01 },
		"penalty NaN":       func(p *reputation.Policy) { p.Penalty = math.NaN() },
		"established 0":     func(p *reputation.Policy) { p.Established = 0 },
		"established 2^53":  func(p *reputation.Policy) { p.Established = 1 << 53 },
		"good step -0.1":    func(p *reputation.Policy) { p.GoodStep = -0.1 },
		"slow step +Inf":    func(p *reputation.Policy) { p.SlowStep = math.Inf(1) },
		"hourly NaN":        func(p *reputation.Policy) { p.HourlyRecovery = math.NaN() },
		"quiet negative":    func(p *reputation.Policy) { p.Quiet = -time.Second },
		"quiet fraction ms": func(p *reputation.Policy) { p.Quiet = 1500 * time.Microsecond },
		"quiet too long":    func(p *reputation.Policy) { p.Quiet = (366 * 24 * time.Hour) + time.Millisecond },
	}
	for name, mutate := range cases {
		p := reputation.DefaultPolicy()
		mutate(&p)
		err := p.Validate()
		if !errors.Is(err, reputation.ErrInvalidPolicy) || !strings.HasPrefix(err.Error(), "ratekit: ") {
			t.Errorf("%s: %v, want an ErrInvalidPolicy starting with \"ratekit: \"", name, err)
		}
	}
}

func TestReputationPolicyID(t *testing.T) {
	a := reputation.DefaultPolicy()
	b := a
	b.SlowStep = 0.004
	c := a
	c.Name = "login"
	if a.ID() == b.ID() || !strings.HasPrefix(a.ID(), "reputation:reputation:") || !strings.HasPrefix(c.ID(), "login:reputation:") {
		t.Fatalf("IDs %q %q %q: new parameters must start fresh state, names must lead", a.ID(), b.ID(), c.ID())
	}
	if a.ID() != reputation.DefaultPolicy().ID() {
		t.Fatal("the ID of equal policies differs")
	}
}

func TestReputationTTL(t *testing.T) {
	cases := []struct {
		score float64
		v     int64
		want  time.Duration
	}{
		{1, 0, 30 * time.Minute}, {0.7, 3, 30 * time.Minute}, {0.69, 3, time.Hour}, {0.3, 9, time.Hour},
		{0.29, 9, 2 * time.Hour}, {0.1, 1, 2 * time.Hour}, {0.09, 1, 4 * time.Hour}, {0, 10, 8 * time.Hour}, {0.8, 10, time.Hour},
	}
	for _, c := range cases {
		if got := reputation.TTL(c.score, c.v); got != c.want {
			t.Errorf("ReputationTTL(%v, %d) = %v, want %v", c.score, c.v, got, c.want)
		}
	}
}
