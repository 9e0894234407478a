package integration_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/levels"
	"github.com/ratekit/ratekit/reputation"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

// levelStore is a store of limits and reputations.
type levelStore interface {
	ratekit.Store
	reputation.Store
}

// levelsConfig: 12 requests per hour for everyone together, 100 per tenant,
// 2 logins per minute per tenant; the tenant is named by X-Tenant.
func levelsConfig(s levelStore) levels.Config {
	return levels.Config{
		Store:      s,
		Tenant:     ratekit.ByHeader("X-Tenant"),
		Global:     []ratekit.Limit{ratekit.FixedWindow(12, time.Hour).Named("global")},
		PerTenant:  []ratekit.Limit{ratekit.FixedWindow(100, time.Hour).Named("tenant")},
		Endpoints:  []levels.Endpoint{{Pattern: "POST /login", Limits: []ratekit.Limit{ratekit.SlidingLog(2, time.Minute).Named("login")}}},
		Reputation: s,
	}
}

func levelsServer(t *testing.T, cfg levels.Config, opts ...ratekit.Option) *httptest.Server {
	t.Helper()
	mw, err := levels.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(ok))
	t.Cleanup(srv.Close)
	return srv
}

func send(t *testing.T, srv *httptest.Server, method, path, tenant string) response {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, nil)
	req.Header.Set("X-Tenant", tenant)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: b.String()}
}

// TestLevelsReputationGate: a tenant that hammered the login endpoint has a
// low reputation; once the global limit is exceeded, a tenant in good
// standing (and a new one) still passes, the low one gets the global 429.
func TestLevelsReputationGate(t *testing.T) {
	stores := map[string]func(t *testing.T) levelStore{
		"memstore": func(t *testing.T) levelStore {
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			return memstore.New(memstore.WithClock(func() time.Time { return now }))
		},
		"redis": func(t *testing.T) levelStore {
			c := redistest.Standalone(t).NewClient(nil)
			t.Cleanup(func() { c.Close() })
			s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			srv := levelsServer(t, levelsConfig(s))
			ctx := context.Background()
			p := reputation.DefaultPolicy()
			for i := range 10 { // 2 logins pass, 8 are violations
				want := http.StatusOK
				if i >= 2 {
					want = http.StatusTooManyRequests
				}
				if r := send(t, srv, "POST", "/login", "bot"); r.Status != want || (i >= 2 && !strings.Contains(r.Body, `"policy":"login"`)) {
					t.Fatalf("login %d: %d %s, want %d", i, r.Status, r.Body, want)
				}
			}
			bot, _ := s.Reputation(ctx, "bot", p)
			if bot.Violations != 8 || bot.Good != 2 || bot.Score >= levels.DefaultThreshold {
				t.Fatalf("bot after 8 denied logins: %+v, want 8 violations and a score below 0.3", bot)
			}
			for range 2 { // the global limit's last 2 requests
				if r := send(t, srv, "GET", "/items", "alice"); r.Status != http.StatusOK {
					t.Fatalf("alice under the global limit: %d", r.Status)
				}
			}
			// the global limit (12) is exceeded from here on
			for _, tenant := range []string{"alice", "newcomer"} {
				r := send(t, srv, "GET", "/items", tenant)
				if r.Status != http.StatusOK || r.Body != "handler" || r.Header.Get("Retry-After") != "" ||
					!strings.HasPrefix(r.Header.Get("RateLimit"), `"tenant";`) {
					t.Fatalf("%s past the global limit: %d %v %q, want admitted by reputation with its own headers", tenant, r.Status, r.Header, r.Body)
				}
			}
			r := send(t, srv, "GET", "/items", "bot")
			if r.Status != http.StatusTooManyRequests || !strings.Contains(r.Body, `"policy":"global"`) ||
				r.Header.Get("Retry-After") == "" || !strings.HasPrefix(r.Header.Get("RateLimit"), `"global";`) {
				t.Fatalf("bot past the global limit: %d %v %s, want the global 429", r.Status, r.Header, r.Body)
			}
			if a, _ := s.Reputation(ctx, "alice", p); a.Good != 3 || a.Score != 1 {
				t.Fatalf("alice: %+v, want 3 good requests", a)
			}
			if b, _ := s.Reputation(ctx, "bot", p); b.Violations != 8 {
				t.Fatalf("bot: %+v; a gate denial is not a violation", b)
			}
			// without reputations the exceeded global limit denies everyone
			cfg := levelsConfig(s)
			cfg.Reputation = nil
			if r := send(t, levelsServer(t, cfg), "GET", "/items", "alice"); r.Status != http.StatusTooManyRequests {
				t.Fatalf("alice without a reputation gate: %d, want 429", r.Status)
			}
		})
	}
}

// TestLevelsRoundTrips counts Redis commands per request: 3 for an admitted
// request (global, tenant, good request), 3 for a tenant denial (global,
// tenant, violation), 4 through the gate (global, reputation, tenant, good
// request), 2 for a gate denial.
func TestLevelsRoundTrips(t *testing.T) {
	c := redistest.RealStandalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	hook := &commands{}
	c.AddHook(hook)
	s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := levelsConfig(s)
	cfg.Global = []ratekit.Limit{ratekit.FixedWindow(6, time.Hour).Named("global")}
	srv := levelsServer(t, cfg)
	p := reputation.DefaultPolicy()
	for range 10 { // scripts loaded, bot's reputation below the threshold
		if _, err := s.RecordViolation(context.Background(), "bot", p); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		method, path, tenant string
		status               int
		commands             int64
	}{
		{"GET", "/items", "alice", 200, 3},
		{"POST", "/login", "alice", 200, 3},
		{"POST", "/login", "alice", 200, 3},
		{"POST", "/login", "alice", 429, 3}, // the login limit denies: a violation
		{"GET", "/items", "alice", 200, 3},
		{"GET", "/items", "alice", 200, 3}, // the global limit's 6th
		{"GET", "/items", "alice", 200, 4}, // through the gate
		{"GET", "/items", "bot", 429, 2},   // stopped by the gate
	}
	for i, st := range steps {
		hook.n.Store(0)
		r := send(t, srv, st.method, st.path, st.tenant)
		if r.Status != st.status || hook.n.Load() != st.commands {
			t.Fatalf("step %d %s %s as %s: %d after %d round trips, want %d after %d", i, st.method, st.path, st.tenant, r.Status, hook.n.Load(), st.status, st.commands)
		}
	}
}

// commands counts the commands a client sends.
type commands struct{ n atomic.Int64 }

func (h *commands) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

// failingReputation is a reputation store that is down.
type failingReputation struct{ levelStore }

var errDown = errors.New("down")

func (failingReputation) Reputation(context.Context, string, reputation.Policy) (reputation.Reputation, error) {
	return reputation.Reputation{}, errDown
}
func (failingReputation) RecordGood(context.Context, string, reputation.Policy) (reputation.Reputation, error) {
	return reputation.Reputation{}, errDown
}

// TestLevelsReputationDown: a failed reputation update is reported and
// changes nothing; a failed read at the gate follows the store error policy.
func TestLevelsReputationDown(t *testing.T) {
	for _, tc := range []struct {
		policy ratekit.ErrorPolicy
		want   int
	}{{ratekit.FailOpen, 200}, {ratekit.FailClosed, 429}} {
		s := memstore.New()
		cfg := levelsConfig(s)
		cfg.Global = []ratekit.Limit{ratekit.FixedWindow(1, time.Hour).Named("global")}
		cfg.Reputation = failingReputation{s}
		var reported atomic.Int64
		srv := levelsServer(t, cfg, ratekit.WithErrorPolicy(tc.policy),
			ratekit.WithErrorHandler(func(*http.Request, error) { reported.Add(1) }))
		if r := send(t, srv, "GET", "/items", "alice"); r.Status != 200 || reported.Load() != 1 {
			t.Fatalf("policy %v, failed good-request update: %d, %d errors reported", tc.policy, r.Status, reported.Load())
		}
		if r := send(t, srv, "GET", "/items", "alice"); r.Status != tc.want || reported.Load() < 2 {
			t.Fatalf("policy %v, failed read at the gate: %d, want %d", tc.policy, r.Status, tc.want)
		}
	}
}

func TestLevelsConfigErrors(t *testing.T) {
	s := memstore.New()
	good := func() levels.Config { return levelsConfig(s) }
	cases := map[string]func(c *levels.Config){
		"no store":          func(c *levels.Config) { c.Store = nil },
		"no tenant key":     func(c *levels.Config) { c.Tenant = nil },
		"no limits":         func(c *levels.Config) { c.Global, c.PerTenant, c.Endpoints = nil, nil, nil },
		"bad limit":         func(c *levels.Config) { c.PerTenant = []ratekit.Limit{ratekit.FixedWindow(0, time.Hour)} },
		"bad pattern":       func(c *levels.Config) { c.Endpoints[0].Pattern = "POST login" },
		"duplicate pattern": func(c *levels.Config) { c.Endpoints = append(c.Endpoints, c.Endpoints[0]) },
		"endpoint without limits": func(c *levels.Config) {
			c.Endpoints[0].Limits = nil
			c.PerTenant = nil
		},
		"global named like a tenant limit": func(c *levels.Config) { c.Global[0] = c.Global[0].Named("login") },
		"threshold above 1":                func(c *levels.Config) { c.Threshold = 1.5 },
		"bad policy": func(c *levels.Config) {
			c.Policy = reputation.DefaultPolicy()
			c.Policy.Penalty = 2
		},
	}
	for name, mutate := range cases {
		c := good()
		mutate(&c)
		if _, err := levels.New(c); err == nil || !strings.HasPrefix(err.Error(), "ratekit: ") {
			t.Errorf("%s: %v, want a ratekit: error", name, err)
		}
	}
	if _, err := levels.New(good()); err != nil {
		t.Fatalf("valid config: %v", err)
	}
}
