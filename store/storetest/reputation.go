package storetest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/reputation"
)

// ReputationHarness is one reputation.Store under test.
type ReputationHarness struct {
	// Store is the store, empty (or under a fresh key prefix).
	Store reputation.Store
	// Advance moves the store's time forward by d.
	Advance func(d time.Duration)
	// Now returns the store's time; required when Exact.
	Now func() time.Time
	// Exact reports a fake clock: the suite then checks every update against
	// the reference model at the store's time.
	Exact bool
}

// scoreTolerance bounds the difference between a store and the reference
// model, whose float operations are grouped differently.
const scoreTolerance = 1e-9

// RunReputation runs the reputation suite; newHarness returns a fresh
// harness for each case. Cases that follow a fake clock run only on Exact
// harnesses.
func RunReputation(t *testing.T, newHarness func(t *testing.T) ReputationHarness) {
	exact := newHarness(t).Exact
	t.Run("UnknownTenant", func(t *testing.T) { repUnknown(t, newHarness(t)) })
	t.Run("Invalid", func(t *testing.T) { repInvalid(t, newHarness(t)) })
	t.Run("ConcurrentUpdatesAreSerial", func(t *testing.T) { repConcurrent(t, newHarness(t)) })
	t.Run("PoliciesApart", func(t *testing.T) { repPoliciesApart(t, newHarness(t)) })
	if !exact {
		return
	}
	t.Run("StepTable", func(t *testing.T) { repSteps(t, newHarness(t)) })
	t.Run("RandomSequenceMatchesModel", func(t *testing.T) { repRandom(t, newHarness(t)) })
}

func (h ReputationHarness) call(t *testing.T, tenant string, p reputation.Policy, op string) reputation.Reputation {
	t.Helper()
	ctx := context.Background()
	var r reputation.Reputation
	var err error
	switch op {
	case "violation":
		r, err = h.Store.RecordViolation(ctx, tenant, p)
	case "good":
		r, err = h.Store.RecordGood(ctx, tenant, p)
	case "get":
		r, err = h.Store.Reputation(ctx, tenant, p)
	}
	if err != nil {
		t.Fatalf("%s(%q): %v", op, tenant, err)
	}
	if !(r.Score >= 0 && r.Score <= 1) || r.TTL < 0 {
		t.Fatalf("%s: out of range: %+v", op, r)
	}
	return r
}

// sameReputation returns what differs between a store's answer and the
// model's, or "".
func sameReputation(got, want reputation.Reputation) string {
	switch {
	case math.Abs(got.Score-want.Score) > scoreTolerance:
		return "score"
	case got.Violations != want.Violations || got.Good != want.Good:
		return "counts"
	case !got.LastViolation.Equal(want.LastViolation):
		return "last violation"
	case !got.Updated.Equal(want.Updated):
		return "updated"
	case got.TTL != want.TTL:
		return "ttl"
	}
	return ""
}

func repUnknown(t *testing.T, h ReputationHarness) {
	p := reputation.DefaultPolicy()
	if r := h.call(t, "new", p, "get"); r.Score != 1 || r.Violations != 0 || r.Good != 0 || r.TTL != 0 || !r.Updated.IsZero() {
		t.Fatalf("unknown tenant: %+v, want score 1 and no state", r)
	}
	if r := h.call(t, "new", p, "good"); r.Score != 1 || r.Good != 1 || r.TTL != 30*time.Minute {
		t.Fatalf("first good request: %+v, want score 1, good 1, ttl 30m", r)
	}
	if r := h.call(t, "new", p, "violation"); math.Abs(r.Score-0.9005) > scoreTolerance || r.Violations != 1 || r.TTL != 30*time.Minute {
		t.Fatalf("first violation: %+v, want score 0.9005 (one good request: 0.1 × (1 − ½ × 1/100) off 1)", r)
	}
}

func repInvalid(t *testing.T, h ReputationHarness) {
	ctx := context.Background()
	if _, err := h.Store.RecordViolation(ctx, "", reputation.DefaultPolicy()); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Fatalf("empty tenant: %v, want ErrEmptyKey", err)
	}
	bad := reputation.DefaultPolicy()
	bad.Penalty = 0
	if _, err := h.Store.RecordGood(ctx, "k", bad); !errors.Is(err, reputation.ErrInvalidPolicy) {
		t.Fatalf("penalty 0: %v, want ErrInvalidPolicy", err)
	}
}

func repPoliciesApart(t *testing.T, h ReputationHarness) {
	a, b := reputation.DefaultPolicy(), reputation.DefaultPolicy()
	b.Name = "other"
	h.call(t, "k", a, "violation")
	if r := h.call(t, "k", b, "get"); r.Score != 1 || r.Violations != 0 {
		t.Fatalf("policy %q sees policy %q's violation: %+v", b.Name, a.Name, r)
	}
	if err := h.Store.ResetReputation(context.Background(), "k", a); err != nil {
		t.Fatal(err)
	}
	if r := h.call(t, "k", a, "get"); r.Score != 1 || r.Violations != 0 {
		t.Fatalf("after ResetReputation: %+v", r)
	}
}

// repConcurrent runs 100 violations and 100 good requests at once. Each
// reply shows the state after its update, so sorting them by
// violations + good gives the order in which the store applied them: that
// must be 1..200 with no gap (no lost update), and every reply must equal the
// model replayed serially in that order at the reply's own time.
func repConcurrent(t *testing.T, h ReputationHarness) {
	p := reputation.DefaultPolicy()
	p.Penalty, p.SlowStep = 0.001, 0.0001 // no clamping at 0 or 1, so order matters
	var mu sync.Mutex
	var replies []reputation.Reputation
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var r reputation.Reputation
			var err error
			if i%2 == 0 {
				r, err = h.Store.RecordViolation(context.Background(), "burst", p)
			} else {
				r, err = h.Store.RecordGood(context.Background(), "burst", p)
			}
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			replies = append(replies, r)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if len(replies) != 200 {
		t.Fatalf("%d of 200 updates answered", len(replies))
	}
	slices.SortFunc(replies, func(a, b reputation.Reputation) int {
		return int((a.Violations + a.Good) - (b.Violations + b.Good))
	})
	m := newRepModel(p)
	var prev reputation.Reputation
	for i, r := range replies {
		if n := r.Violations + r.Good; n != int64(i+1) {
			t.Fatalf("update %d: violations %d + good %d = %d; updates were lost or merged", i+1, r.Violations, r.Good, n)
		}
		var want reputation.Reputation
		if r.Violations > prev.Violations {
			want = m.violation(r.Updated.UnixMicro())
		} else {
			want = m.good(r.Updated.UnixMicro())
		}
		if what := sameReputation(r, want); what != "" {
			t.Fatalf("update %d: %s differs from the serial model\nstore: %+v\nmodel: %+v", i+1, what, r, want)
		}
		prev = r
	}
	last := h.call(t, "burst", p, "get")
	if last.Violations != 100 || last.Good != 100 || math.Abs(last.Score-m.score) > scoreTolerance || last.Score == 1 {
		t.Fatalf("after 200 concurrent updates: %+v, want 100 violations, 100 good, score %v", last, m.score)
	}
}

// repRandom plays 3,000 random calls with time steps from milliseconds
// (rapid fire) to hours (recovery, TTL tiers, expiry) against the model.
func repRandom(t *testing.T, h ReputationHarness) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := reputation.DefaultPolicy()
	models := map[string]*repModel{"a": newRepModel(p), "b": newRepModel(p)}
	for i := range 3000 {
		var adv time.Duration
		switch r := rng.IntN(20); {
		case r < 10:
			adv = time.Duration(rng.IntN(1500)) * time.Millisecond
		case r < 18:
			adv = time.Duration(rng.IntN(1800_000)) * time.Millisecond
		default:
			adv = time.Duration(rng.IntN(5*3600_000)) * time.Millisecond
		}
		op := []string{"violation", "violation", "good", "good", "good", "get"}[rng.IntN(6)]
		tenant := []string{"a", "b"}[rng.IntN(2)]
		h.Advance(adv)
		now := h.Now().UnixMicro()
		got := h.call(t, tenant, p, op)
		m := models[tenant]
		var want reputation.Reputation
		switch op {
		case "violation":
			want = m.violation(now)
		case "good":
			want = m.good(now)
		default:
			want = m.get(now)
		}
		if what := sameReputation(got, want); what != "" {
			t.Fatalf("call %d (%s %s after %s): %s differs from the model\nstore: %+v\nmodel: %+v", i, op, tenant, adv, what, got, want)
		}
	}
}
