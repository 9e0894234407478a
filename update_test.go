package ratekit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// updateSet returns the limits of the Update tests with quota q: a fixed
// window "a" of q per minute and a GCRA "b" of q per minute, burst q.
func updateSet(q int64) []ratekit.Limit {
	return []ratekit.Limit{
		ratekit.FixedWindow(q, time.Minute).Named("a"),
		ratekit.GCRA(float64(q), time.Minute, q).Named("b"),
	}
}

// fakeLimiter returns a Limiter of limits on a fresh in-process store whose
// clock moves only when the test says.
func fakeLimiter(t *testing.T, limits ...ratekit.Limit) *ratekit.Limiter {
	t.Helper()
	c := storetest.NewClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	l, err := ratekit.New(memstore.New(memstore.WithClock(c.Now)), limits...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// setQuota returns the quota shared by every limit of a Decision of the
// updateSet limits, or an error naming the mix or the missing state.
func setQuota(d ratekit.Decision) (int64, error) {
	if len(d.States) != 2 || d.States[0].Limit.Name() != "a" || d.States[1].Limit.Name() != "b" {
		return 0, fmt.Errorf("decision %+v: want the states of a and b, in order", d)
	}
	q := d.States[0].Limit.Spec().Quota
	if d.States[1].Limit.Spec().Quota != q || d.Limit.Spec().Quota != q || (q != 1000 && q != 2000) {
		return 0, fmt.Errorf("decision %+v: quotas a %d, b %d, binding %d; want one set's (1000 or 2000)",
			d, q, d.States[1].Limit.Spec().Quota, d.Limit.Spec().Quota)
	}
	return q, nil
}

// TestUpdateIsAtomic: 64 goroutines decide while another swaps the limits
// between set X (quotas 1000) and set Y (2000) under the same names, as
// fast as it can, until they are done: every call succeeds, and each
// decision is X's or Y's, never a mix.
func TestUpdateIsAtomic(t *testing.T) {
	x, y := updateSet(1000), updateSet(2000)
	l := newLimiter(t, x...)
	const deciders, decisions = 64, 2000 // decisions per goroutine
	var (
		done          atomic.Bool
		updates       int
		byX, byY      atomic.Int64
		wg            sync.WaitGroup
		failure       = make(chan error, deciders+1)
		updaterExited = make(chan struct{})
	)
	go func() {
		defer close(updaterExited)
		for ; !done.Load(); updates++ {
			next := y
			if updates%2 == 1 {
				next = x
			}
			if err := l.Update(next...); err != nil {
				failure <- fmt.Errorf("update %d: %w", updates, err)
				return
			}
		}
	}()
	for i := range deciders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("k%d", i%8) // shared subjects: most decisions are denials
			for range decisions {
				d, err := l.AllowN(context.Background(), key, 1)
				var q int64
				if err == nil {
					q, err = setQuota(d)
				}
				if err != nil {
					failure <- err
					return
				}
				if q == 1000 {
					byX.Add(1)
				} else {
					byY.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	<-updaterExited
	close(failure)
	for err := range failure {
		t.Error(err)
	}
	if byX.Load() == 0 || byY.Load() == 0 || updates < 2 {
		t.Errorf("decisions under X %d, under Y %d, in %d updates; want some under each", byX.Load(), byY.Load(), updates)
	}
	t.Logf("%d decisions under X, %d under Y, %d updates", byX.Load(), byY.Load(), updates)
}

// TestUpdateCarriesCounts: 3 used of a quota of 5; the quota updated to 10
// under the same name admits exactly 7 more.
func TestUpdateCarriesCounts(t *testing.T) {
	l := fakeLimiter(t, ratekit.FixedWindow(5, time.Minute).Named("api"))
	ctx := context.Background()
	for i := range 3 {
		if d, err := l.Allow(ctx, "k"); err != nil || !d.Allowed || d.Remaining != int64(4-i) {
			t.Fatalf("request %d under quota 5: %+v, %v", i+1, d, err)
		}
	}
	if err := l.Update(ratekit.FixedWindow(10, time.Minute).Named("api")); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if d, err := l.Allow(ctx, "k"); err != nil || !d.Allowed || d.Remaining != int64(6-i) {
			t.Fatalf("request %d after the update to 10: %+v, %v; want an admission, %d left", i+1, d, err, 6-i)
		}
	}
	if d, err := l.Allow(ctx, "k"); err != nil || d.Allowed || d.Limit.Spec().Quota != 10 {
		t.Fatalf("request 11 in all: %+v, %v; want a denial by the quota of 10", d, err)
	}
}

// inForce checks that l decides key by a fixed window of quota 2: two
// requests pass, the third is denied by it.
func inForce(t *testing.T, l *ratekit.Limiter, key string) {
	t.Helper()
	ctx := context.Background()
	for i := range 2 {
		if d, err := l.Allow(ctx, key); err != nil || !d.Allowed {
			t.Fatalf("request %d for %s under the old limits: %+v, %v; want an admission", i+1, key, d, err)
		}
	}
	if d, err := l.Allow(ctx, key); err != nil || d.Allowed || d.Limit.Name() != "a" || d.Limit.Spec().Quota != 2 {
		t.Fatalf("request 3 for %s: %+v, %v; want a denial by the old limit a (quota 2)", key, d, err)
	}
}

// TestUpdateRefusesInvalidLimits: Update checks limits as New does, with
// New's errors, and a refused Update leaves the old limits in force.
func TestUpdateRefusesInvalidLimits(t *testing.T) {
	l := fakeLimiter(t, ratekit.FixedWindow(2, time.Minute).Named("a"))
	for i, c := range []struct {
		name   string
		limits []ratekit.Limit
	}{
		{"none", nil},
		{"zero quota", []ratekit.Limit{ratekit.FixedWindow(0, time.Minute).Named("a")}},
		{"bad name", []ratekit.Limit{ratekit.FixedWindow(5, time.Minute).Named("a b")}},
		{"one name twice", []ratekit.Limit{ratekit.FixedWindow(5, time.Minute).Named("a"), ratekit.GCRA(5, time.Minute, 5).Named("a")}},
		{"bad carry rule", []ratekit.Limit{ratekit.FixedWindow(5, time.Minute).Named("a").Carry(carry.Rule(7))}},
		{"two faults", []ratekit.Limit{ratekit.FixedWindow(0, time.Minute).Named("a"), ratekit.SlidingLog(5, 0).Named("c")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, newErr := ratekit.New(memstore.New(), c.limits...)
			err := l.Update(c.limits...)
			if !errors.Is(err, ratekit.ErrInvalidLimit) || newErr == nil || err.Error() != newErr.Error() {
				t.Fatalf("Update: %v; want New's error: %v", err, newErr)
			}
			inForce(t, l, fmt.Sprintf("k%d", i))
		})
	}
}

// TestUpdateKeepsInFlightOrNot: Update cannot give a Limiter without
// InFlight limits one, or take all of them from one that has them; the
// old limits stay in force.
func TestUpdateKeepsInFlightOrNot(t *testing.T) {
	ctx := context.Background()
	t.Run("add", func(t *testing.T) {
		l := fakeLimiter(t, ratekit.FixedWindow(2, time.Minute).Named("a"))
		err := l.Update(ratekit.FixedWindow(2, time.Minute).Named("a"), ratekit.InFlight(3).Named("slots"))
		if !errors.Is(err, ratekit.ErrInvalidLimit) {
			t.Fatalf("Update adding an InFlight limit: %v, want ErrInvalidLimit", err)
		}
		inForce(t, l, "k") // AllowN still serves: no InFlight limit came in
	})
	t.Run("remove", func(t *testing.T) {
		l := fakeLimiter(t, ratekit.FixedWindow(10, time.Minute).Named("a"), ratekit.InFlight(2).Named("slots"))
		err := l.Update(ratekit.FixedWindow(10, time.Minute).Named("a"))
		if !errors.Is(err, ratekit.ErrInvalidLimit) {
			t.Fatalf("Update removing the InFlight limits: %v, want ErrInvalidLimit", err)
		}
		if _, err := l.AllowN(ctx, "k", 1); !errors.Is(err, ratekit.ErrInvalidLimit) {
			t.Fatalf("AllowN after the refused Update: %v; want the InFlight limit's refusal (use Reserve)", err)
		}
		var held []*ratekit.Reservation
		for i := range 2 {
			r, err := l.Reserve(ctx, "k", 1)
			if err != nil || !r.Decision.Allowed {
				t.Fatalf("slot %d: %+v, %v; want an admission", i+1, r, err)
			}
			held = append(held, r)
		}
		r, err := l.Reserve(ctx, "k", 1)
		if err != nil || r.Decision.Allowed || r.Decision.Limit.Name() != "slots" {
			t.Fatalf("a third slot: %+v, %v; want a denial by the old limit slots (2)", r, err)
		}
		for _, r := range held {
			if err := r.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestUpdateReservationSettlesAgainstItsLimits: a Reservation made before
// an Update settles against the limits it was made with: 5 reserved under
// a (quota 10), then a raised to 20 and b added; settling to 2 leaves a
// with 18 and b untouched. InFlight slots held before an Update count
// under the new limit until released.
func TestUpdateReservationSettlesAgainstItsLimits(t *testing.T) {
	ctx := context.Background()
	t.Run("charge", func(t *testing.T) {
		l := fakeLimiter(t, ratekit.FixedWindow(10, time.Minute).Named("a"))
		r, err := l.Reserve(ctx, "k", 5)
		if err != nil || !r.Decision.Allowed {
			t.Fatalf("Reserve: %+v, %v", r, err)
		}
		if err := l.Update(ratekit.FixedWindow(20, time.Minute).Named("a"), ratekit.GCRA(100, time.Minute, 100).Named("b")); err != nil {
			t.Fatal(err)
		}
		if err := r.Settle(ctx, 2); err != nil {
			t.Fatalf("Settle after Update: %v", err)
		}
		d, err := l.Peek(ctx, "k")
		if err != nil || len(d.States) != 2 || d.States[0].Remaining != 18 || d.States[1].Remaining != 100 {
			t.Fatalf("after settling to 2: %+v, %v; want a with 18 left (20 − 2), b with 100", d, err)
		}
	})
	t.Run("slots", func(t *testing.T) {
		l := fakeLimiter(t, ratekit.InFlight(2).Named("slots"))
		var held []*ratekit.Reservation
		for range 2 {
			r, err := l.Reserve(ctx, "k", 1)
			if err != nil || !r.Decision.Allowed {
				t.Fatalf("Reserve: %+v, %v", r, err)
			}
			held = append(held, r)
		}
		if err := l.Update(ratekit.InFlight(1).Named("slots")); err != nil {
			t.Fatal(err)
		}
		for i, r := range held {
			if d, err := l.Reserve(ctx, "k", 1); err != nil || d.Decision.Allowed {
				t.Fatalf("%d held of 1: %+v, %v; want a denial", 2-i, d, err)
			}
			if err := r.Settle(ctx, 1); err != nil {
				t.Fatalf("Settle after Update: %v", err)
			}
		}
		r, err := l.Reserve(ctx, "k", 1)
		if err != nil || !r.Decision.Allowed || r.Decision.Remaining != 0 {
			t.Fatalf("both old slots released: %+v, %v; want an admission, none left", r, err)
		}
		if err := r.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestUpdateKeepsInFlightCounts: the instance's count of requests in
// flight goes on across Update, so a subject that holds every slot is
// refused in-process (Cached) by the new limits too, and the new quota
// applies to the requests already counted.
func TestUpdateKeepsInFlightCounts(t *testing.T) {
	ctx := context.Background()
	l, err := ratekit.New(memstore.New(), ratekit.InFlight(2).Named("slots"))
	if err != nil {
		t.Fatal(err)
	}
	var held []*ratekit.Reservation
	for range 2 {
		r, err := l.Reserve(ctx, "k", 1)
		if err != nil || !r.Decision.Allowed {
			t.Fatalf("reserve: %+v %v", r, err)
		}
		held = append(held, r)
	}
	if err := l.Update(ratekit.InFlight(2).Named("slots")); err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(ctx, "k", 1)
	if err != nil || r.Decision.Allowed || !r.Decision.Cached {
		t.Fatalf("a third request after Update: %+v %v; want a denial in-process (Cached)", r.Decision, err)
	}
	if err := l.Update(ratekit.InFlight(3).Named("slots")); err != nil {
		t.Fatal(err)
	}
	r, err = l.Reserve(ctx, "k", 1)
	if err != nil || !r.Decision.Allowed {
		t.Fatalf("a third request under 3 slots: %+v %v", r.Decision, err)
	}
	held = append(held, r)
	for _, r := range held {
		if err := r.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if r, err := l.Reserve(ctx, "k", 1); err != nil || !r.Decision.Allowed {
			t.Fatalf("after every release: %+v %v", r.Decision, err)
		}
	}
}
