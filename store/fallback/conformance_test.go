package fallback_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// A fallback.Store whose primary answers is the primary: it passes the
// conformance suite as memstore does.
func TestConformanceHealthy(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock(time.Unix(1_700_000_000, 0))
		d := storetest.NewDraw()
		p := memstore.New(memstore.WithClock(c.Now), memstore.WithRandom(d.Float64))
		s, err := fallback.New(p, memstore.New(memstore.WithClock(c.Now)), fallback.Config{Instances: 4})
		if err != nil {
			t.Fatal(err)
		}
		return storetest.Harness{Store: s, Advance: c.Advance, Exact: true, Draw: d}
	})
}

// TestOverridesHealthy: a fallback.Store whose primary answers holds its
// overrides in the primary, and passes the override suite as memstore
// does; its two-instance cases run two fallback stores on one primary.
func TestOverridesHealthy(t *testing.T) {
	storetest.RunOverrides(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock(time.Unix(1_700_000_000, 0))
		p := memstore.New(memstore.WithClock(c.Now))
		instance := func() ratekit.Store {
			s, err := fallback.New(p, memstore.New(memstore.WithClock(c.Now)), fallback.Config{Instances: 4})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		return storetest.Harness{Store: instance(), Advance: c.Advance, Exact: true, Twin: instance}
	})
}

// decisionsFail is a primary whose every decision fails; its Reset works
// (there is nothing to reset).
type decisionsFail struct{}

func (s decisionsFail) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, nil).Prepare(limits)
}

func (decisionsFail) Take(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errRefused
}

func (decisionsFail) Peek(context.Context, string, []ratekit.Limit) (ratekit.Decision, error) {
	return ratekit.Decision{}, errRefused
}

func (decisionsFail) Reset(context.Context, string, []ratekit.Limit) error { return nil }

// With one instance and a primary that always fails, every decision is the
// local store's, which passes the suite too: falling back changes no answer
// but its source.
func TestConformanceFallingBack(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock(time.Unix(1_700_000_000, 0))
		d := storetest.NewDraw()
		l := memstore.New(memstore.WithClock(c.Now), memstore.WithRandom(d.Float64))
		s, err := fallback.NewWithClock(decisionsFail{}, l, fallback.Config{}, c.Now)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fallback.WaitProbes(s) })
		return storetest.Harness{Store: s, Advance: c.Advance, Exact: true, Draw: d}
	})
}
