package ratekit

import (
	"hash/maphash"
	"maps"
	"sync"
	"time"

	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/internal/elapsed"
)

const (
	gateShards     = 32  // how many locks a gate spreads its subjects over
	gateCompactMin = 256 // the peak below which a shard's map is never rebuilt: rebuilding would churn
)

// A gate counts, per subject, this instance's requests that hold one of the
// Limiter's InFlight slots or are asking the store for one, and refuses a
// request that would make the count exceed the limit in force: n, or an
// override's as the store last reported it, within gateFresh of that
// report (see InFlight). A shard's map,
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
	clock  elapsed.Clock
	shards [gateShards]gateShard
}

// gateShard holds the counts of the subjects that hash to it.
type gateShard struct {
	mu   sync.Mutex
	held map[string]held
	peak int // the largest len(held) since held was made
	// a cache line of its own: BenchmarkGate, 73 ns against 170 ns with
	// shards sharing lines, on 2 cores (Reserve and Release: about 1.1 µs)
	_ [40]byte
}

// held is one subject's count, the InFlight limit in force for it when the
// store last reported one other than the gate's (an override; the zero
// Limit: the gate's), and when the store was last asked or answered about
// it (the gate's clock, ns).
type held struct {
	n     int64
	limit Limit
	asked int64
}

// gateFresh is how long a store's answer about a subject lets the gate
// refuse it in-process: then one request asks the store again, so that an
// override that raised the limit is seen within it.
const gateFresh = int64(100 * time.Millisecond)

// newGate returns the gate of the InFlight limits among limits, nil when
// there are none.
func newGate(limits []Limit) *gate {
	var g *gate
	for _, l := range limits {
		if l.def().Concurrent && (g == nil || l.def().Quota < g.n) {
			// the store's denial by this limit alone: the others' numbers only the store knows
			g = &gate{n: l.def().Quota, counts: &counts{seed: maphash.MakeSeed(), clock: elapsed.New(nil)},
				denial: Decision{Limit: l, RetryAfter: algo.RetryInFlight, Cached: true}}
		}
	}
	return g
}

// enter counts one more request of key, and reports false, counting
// nothing, with the denial to give, when as many as the limit in force
// allows are already counted. At capacity, once the store's last answer is
// gateFresh old, one request enters to ask the store again: that entry is
// a probe (over), which the denial answers if the store cannot.
func (g *gate) enter(key string) (denial Decision, ok, over bool) {
	sh := &g.shards[maphash.String(g.seed, key)%gateShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h := sh.held[key]
	n, denial := g.n, g.denial
	if h.limit.d != nil {
		n, denial.Limit = h.limit.def().Quota, h.limit
	}
	now := g.clock.Nanos()
	over = h.n >= n
	if over && now-h.asked < gateFresh {
		return denial, false, true
	}
	h.asked = now // this request asks the store: at capacity, the others wait for its answer
	if sh.held == nil {
		sh.held = make(map[string]held)
	}
	h.n++
	sh.held[key] = h
	sh.peak = max(sh.peak, len(sh.held))
	return denial, true, over
}

// learn records, for key while it is counted, the InFlight limit in force
// that the store reported in d, when it is not the gate's own.
func (g *gate) learn(key string, d *Decision) {
	name := g.denial.Limit.Name()
	for _, st := range d.states(new([1]LimitState)) {
		if st.Limit.Name() == name {
			g.inForce(key, st.Limit)
		}
	}
}

// inForce records in as the InFlight limit in force for key, while it is
// counted: an override's, or the gate's own.
func (g *gate) inForce(key string, in Limit) {
	if in == g.denial.Limit {
		in = Limit{}
	}
	sh := &g.shards[maphash.String(g.seed, key)%gateShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if h, ok := sh.held[key]; ok {
		h.limit, h.asked = in, g.clock.Nanos()
		sh.held[key] = h
	}
}

// leave counts one request of key fewer, for each enter that reported true.
func (g *gate) leave(key string) {
	sh := &g.shards[maphash.String(g.seed, key)%gateShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if h := sh.held[key]; h.n > 1 {
		h.n--
		sh.held[key] = h
		return
	}
	delete(sh.held, key)
	if n := len(sh.held); sh.peak > gateCompactMin && n < sh.peak/8 {
		m := make(map[string]held, n)
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
