package ratekit

import (
	"strconv"
	"testing"
)

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
			if !g.enter(k) {
				b.Fatal("refused")
			}
			g.leave(k)
			i++
		}
	})
}
