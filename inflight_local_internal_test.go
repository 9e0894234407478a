package ratekit

import (
	"strconv"
	"testing"
)

// TestGateShrinks: after 20,000 subjects entered at once and left, every
// shard's map was rebuilt small, and the counts are exact throughout.
func TestGateShrinks(t *testing.T) {
	g := newGate([]Limit{InFlight(2)})
	enter := func(k string) bool { _, ok, _ := g.enter(k); return ok }
	keys := make([]string, 20_000)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		if !enter(keys[i]) || !enter(keys[i]) || enter(keys[i]) {
			t.Fatalf("%s: want two places and a refusal", keys[i])
		}
	}
	for _, k := range keys {
		g.leave(k)
		if !enter(k) || enter(k) {
			t.Fatalf("%s: want a place back, then a refusal", k)
		}
		g.leave(k)
		g.leave(k)
	}
	for i := range g.shards {
		if sh := &g.shards[i]; len(sh.held) != 0 || sh.peak > gateCompactMin {
			t.Fatalf("shard %d: %d entries, peak %d since its map was made; want 0, at most %d", i, len(sh.held), sh.peak, gateCompactMin)
		}
	}
}

// BenchmarkGate measures one place taken and given back in a Limiter's
// count of in-flight requests, on every core, over 10,000 subjects.
func BenchmarkGate(b *testing.B) {
	g := newGate([]Limit{InFlight(10_000)})
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			k := keys[i%len(keys)]
			if _, ok, _ := g.enter(k); !ok {
				b.Fatal("refused")
			}
			g.leave(k)
			i++
		}
	})
}
