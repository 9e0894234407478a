package store_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// TestSingle: a Decision about one limit has no States; its own fields are
// the limit's state, as Combine gives it.
func TestSingle(t *testing.T) {
	l := ratekit.LeakyBucket(5, 1, time.Second).Queue(time.Minute)
	for _, st := range []ratekit.LimitState{
		{Limit: l, Allowed: true, Remaining: 3, ResetAfter: 2 * time.Second, Delay: time.Second},
		{Limit: l, RetryAfter: time.Second, ResetAfter: 5 * time.Second, Blocked: true},
		{Limit: l, Unsatisfiable: true, Suppression: 1},
	} {
		d := store.Single(st)
		if c := store.Combine([]ratekit.LimitState{st}); !reflect.DeepEqual(c, d) {
			t.Fatalf("Single(%+v) = %+v, Combine of it %+v", st, d, c)
		}
		got := ratekit.LimitState{Limit: d.Limit, Allowed: d.Allowed, Remaining: d.Remaining, ResetAfter: d.ResetAfter,
			RetryAfter: d.RetryAfter, Unsatisfiable: d.Unsatisfiable, Blocked: d.Blocked, Delay: d.Delay, Suppression: d.Suppression}
		if d.States != nil || got != st {
			t.Fatalf("Single(%+v) = %+v; want its fields, States nil", st, d)
		}
	}
	two := []ratekit.LimitState{{Limit: l, Allowed: true, Remaining: 1}, {Limit: ratekit.FixedWindow(1, time.Second), Remaining: 0}}
	if d := store.Combine(two); len(d.States) != 2 || d.Allowed || d.Limit != two[1].Limit {
		t.Fatalf("Combine of two = %+v; want both states, denied by the second", d)
	}
}
