package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/internal/redistest"
)

// TestResetKeepsEarlierBuckets: a carry.Reset limit keeps the key of
// earlier releases, whose bucket value was a bare TAT; it is read as a TAT
// in the limit's own interval.
func TestResetKeepsEarlierBuckets(t *testing.T) {
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	st := newStore(t, c, redistest.Prefix(t))
	l := ratekit.GCRA(100, time.Minute, 100).Carry(carry.Reset) // 600 ms a unit
	keys, err := st.Keys("alice", []ratekit.Limit{l})
	if err != nil {
		t.Fatal(err)
	}
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	tat := now.UnixMicro() + 60_000_000 // the whole burst used
	if err := c.Set(ctx, keys[0], strconv.FormatInt(tat, 10), time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	lim, err := ratekit.New(st, l)
	if err != nil {
		t.Fatal(err)
	}
	d, err := lim.Allow(ctx, "alice")
	if err != nil || d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 600*time.Millisecond {
		t.Fatalf("a bucket an earlier release left full: %+v %v; want a denial within one unit (600ms)", d, err)
	}
}
