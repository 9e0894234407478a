package ratekit

import (
	"hash/maphash"
	"maps"
	"sync"

	"github.com/ratekit/ratekit/internal/algo"
)

const (
	gateShards     = 32  // how many locks a gate spreads its subjects over
	gateCompactMin = 256 // the peak below which a shard's map is never rebuilt: rebuilding would churn
)

// A gate counts, per subject, this instance's requests that hold one of the
// Limiter's InFlight slots or are asking the store for one, and refuses a
// request that would make the count exceed n (see InFlight). A shard's map,
// which Go never shrinks, is rebuilt once it holds less than an eighth of
// its peak. A gate is safe for concurrent use; the zero gate is not usable.
type gate struct {
	n      int64
	denial Decision // a refusal, as a store gives it for the binding limit
	*counts
}

// counts are a gate's counts per subject, which the gate of a Limiter's
// next limits (Limiter.Update) goes on with.
type counts struct {
	seed   maphash.Seed
	shards [gateShards]gateShard
}

// gateShard holds the counts of the subjects that hash to it.
type gateShard struct {
	mu   sync.Mutex
	held map[string]int64
	peak int // the largest len(held) since held was made
	// a cache line of its own: BenchmarkGate, 73 ns against 170 ns with
	// shards sharing lines, on 2 cores (Reserve and Release: about 1.1 µs)
	_ [40]byte
}

// newGate returns the gate of the InFlight limits among limits, nil when
// there are none.
func newGate(limits []Limit) *gate {
	var g *gate
	for _, l := range limits {
		if l.def().Concurrent && (g == nil || l.def().Quota < g.n) {
			// the store's denial by this limit alone: the others' numbers only the store knows
			g = &gate{n: l.def().Quota, counts: &counts{seed: maphash.MakeSeed()},
				denial: Decision{Limit: l, RetryAfter: algo.RetryInFlight, Cached: true}}
		}
	}
	return g
}

// enter counts one more request of key, and reports false, counting
// nothing, when n of them are already counted.
func (g *gate) enter(key string) bool {
	sh := &g.shards[maphash.String(g.seed, key)%gateShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c := sh.held[key]
	if c >= g.n {
		return false
	}
	if sh.held == nil {
		sh.held = make(map[string]int64)
	}
	sh.held[key] = c + 1
	sh.peak = max(sh.peak, len(sh.held))
	return true
}

// leave counts one request of key fewer, for each enter that reported true.
func (g *gate) leave(key string) {
	sh := &g.shards[maphash.String(g.seed, key)%gateShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if c := sh.held[key]; c > 1 {
		sh.held[key] = c - 1
		return
	}
	delete(sh.held, key)
	if n := len(sh.held); sh.peak > gateCompactMin && n < sh.peak/8 {
		m := make(map[string]int64, n)
		maps.Copy(m, sh.held)
		sh.held, sh.peak = m, n
	}
}

// leaveGate gives back the reservation's place in its Limiter's gate, once:
// its request has ended. It does nothing for a reservation that holds none.
func (r *Reservation) leaveGate() {
	if r == nil {
		return
	}
	r.mu.Lock()
	held := r.gated
	r.gated = false
	r.mu.Unlock()
	if held {
		r.set.gate.leave(r.key)
	}
}
