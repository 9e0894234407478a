package memstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestFloodOfNewSubjects: a flood of new subjects (RATEKIT_FLOOD of them,
// default 100,000, into a store bounded at a tenth of that, or
// RATEKIT_FLOOD_BOUND) keeps the store at its bound, loses none of the
// denials in force before it, and over-admits the subjects it evicted by
// no more than the documented quota−1 per eviction.
//
//	RATEKIT_FLOOD=1000000 RATEKIT_FLOOD_BOUND=262144 go test -run TestFloodOfNewSubjects -v ./store/memstore
func TestFloodOfNewSubjects(t *testing.T) {
	flood, bound := 100_000, 10_000
	if n, err := strconv.Atoi(os.Getenv("RATEKIT_FLOOD")); err == nil && n > 0 {
		flood = n
	}
	if n, err := strconv.Atoi(os.Getenv("RATEKIT_FLOOD_BOUND")); err == nil && n > 0 {
		bound = n
	}
	ctx := context.Background()
	base := heapAlloc()
	s := memstore.New(memstore.WithClock(newClock().Now), memstore.WithMaxEntries(bound), memstore.WithSweepEvery(time.Hour))
	defer s.Close()
	const quota = 5
	limit := []ratekit.Limit{ratekit.FixedWindow(quota, time.Hour)}
	take := func(key string) ratekit.Decision {
		d, err := storetest.Take(ctx, s, key, limit, 1)
		if err != nil {
			t.Fatalf("Take(%s): %v", key, err)
		}
		return d
	}
	denied, tracked := bound/10, bound/10
	for i := range denied { // at the quota: denials in force
		for range quota {
			take("denied-" + strconv.Itoa(i))
		}
	}
	for i := range tracked { // one request left each: evictable
		for range quota - 1 {
			take("tracked-" + strconv.Itoa(i))
		}
	}
	admitted := 0
	for i := range flood {
		if take("flood-" + strconv.Itoa(i)).Allowed {
			admitted++
		}
	}
	heap := heapAlloc() - base
	if heap > int64(bound)*512 {
		t.Fatalf("heap %d B after the flood, want under 512 B per entry of the bound %d", heap, bound)
	}
	if counted, n := memstore.Counted(s); n > bound || counted != int64(n) {
		t.Fatalf("%d entries (%d counted) after the flood, bound %d", n, counted, bound)
	}
	lost := 0
	for i := range denied {
		if take("denied-" + strconv.Itoa(i)).Allowed {
			lost++
		}
	}
	if lost != 0 {
		t.Fatalf("%d of %d denials in force were lost to the flood", lost, denied)
	}
	extra, evicted := 0, 0
	for i := range tracked {
		k := "tracked-" + strconv.Itoa(i)
		n := 0
		for take(k).Allowed {
			n++
		}
		if n > 1 { // one was left: the rest were admitted again after an eviction
			evicted++
			extra += n - 1
		}
	}
	if extra > evicted*(quota-1) {
		t.Fatalf("over-admission %d for %d evicted subjects, above the bound of quota−1 = %d each", extra, evicted, quota-1)
	}
	t.Logf("flood of %d new subjects into a bound of %d: %d admitted, store heap %d B (%.0f B per entry of the bound); "+
		"%d of %d denials held; %d of %d tracked subjects evicted, over-admitted %d (bound %d)",
		flood, bound, admitted, heap, float64(heap)/float64(bound), denied, denied, evicted, tracked, extra, evicted*(quota-1))
}
