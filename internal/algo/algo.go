// Package algo is the kit's algorithm core. Each built-in algorithm's Go
// rules live in one file: its names, validation, the engine's three
// parameters, the header quota and window, the fallback's share, its Caps,
// and the decide and settle arithmetic memstore runs, which
// store/redisengine's Lua mirrors. table.go lists them by name; custom.go
// holds the rules of custom algorithms, which only the Redis stores decide.
// It does not import ratekit, which imports it.
package algo

import (
	"fmt"
	"time"
)

// A Spec is a limit's algorithm and parameters: ratekit.Spec's fields in
// its order, so that each converts to the other.
type Spec struct {
	Algorithm, Name, ID                         string
	Quota                                       int64
	Rate                                        float64
	Window, Interval, Precision, MaxWait, Block time.Duration
	Factor                                      float64
	Hard                                        int64
	Params                                      [3]int64
	Concurrent                                  bool // Holds: requests in flight, not over time
}

// State is one limit's state for one subject, as memstore keeps it: a
// count or a theoretical arrival time (µs), and the millisecond at which it
// expires. Like a Redis key, it lives through that millisecond.
type State struct {
	Value    int64
	ExpireMS int64
	Buckets  []Bucket // sliding, suppressed: counts by bucket, oldest first
	Log      []int64  // log: admitted requests (µs); inflight: leases as pairs (expiry µs, id)
}

// A Bucket is one bucket of a sliding window: its index (ms / width), its
// count, and (suppressed) how many of those calls were admitted.
type Bucket struct{ Idx, N, A int64 }

// A Call is what one decision asks of a limit.
type Call struct {
	Cost   int64
	Charge bool  // charge Cost if the limit admits it; else only check
	Now    int64 // the store's clock, µs
	Draw   int64 // the call's uniform draw k in [0, 2^53), for k / 2^53
	Lease  int64 // inflight: the lease a charge takes
}

// A Result is what one limit says of a call: ratekit.LimitState without its
// Limit and Blocked, which the store sets.
type Result struct {
	Allowed, Unsatisfiable bool
	Remaining              int64
	ResetAfter, RetryAfter time.Duration
	EffectiveWindow, Delay time.Duration
	Suppression            float64
}

// Caps are what an algorithm can do, for the code around it.
type Caps uint8

const (
	// Cacheable: a denial stands until its RetryAfter unless the state is
	// reset or settled, so a deny cache may answer it.
	Cacheable Caps = 1 << iota
	// Leasable: units of the quota can be leased and spent later without
	// passing bursts the limit refuses (store/lease).
	Leasable
	// Holds: an admitted call (a reserve of cost 0 too) holds one slot,
	// named by the call's lease, until released or lapsed; no window (no
	// t or w in headers, qu="concurrent-requests").
	Holds
	// Draws: a call needs a uniform draw, the limit may report a
	// suppression factor, and it counts declined calls too (see Commit).
	Draws
	// SettlesAtReset: a charge can be settled; it sits at the end of the
	// state charged (a window's end, a bucket's TAT): the call's time plus
	// the ResetAfter after it. SettlesAtCall: it sits at the call's time.
	SettlesAtReset
	SettlesAtCall
	Settles = SettlesAtReset | SettlesAtCall
)

// Rules are what the kit reads of an algorithm, a custom one's too (see
// Of). The methods never change s but in Derive and Share. Implementations
// are stateless, safe for concurrent use.
type Rules interface {
	Caps() Caps
	// Validate returns the first parameter at fault, in the order ratekit
	// reports them; shadow: the limit is in shadow mode.
	Validate(s *Spec, shadow bool) Fault
	Derive(s *Spec)          // sets the derived values (Interval, Hard)
	Describe(s *Spec) string // Limit.String but for the block
	Args(s *Spec) [3]int64   // the three parameters the Redis engine sends
	// Header returns the quota and window RateLimit-Policy describes (a
	// window of 0: none).
	Header(s *Spec) (quota int64, window time.Duration)
	// Share makes s one of n instances' share, or reports false (s is then
	// unchanged).
	Share(s *Spec, n int64) bool
}

// An Algorithm is a built-in algorithm (see Lookup): its Rules and the
// arithmetic memstore runs, which the engine's Lua mirrors.
type Algorithm interface {
	Rules
	// Decide decides c against the live state e (nil: none), which it never
	// changes, writing the limit's result to *r; when c charges and the
	// limit admits (Draws: when c charges) it writes the state to store to
	// *next. Both are zero on entry.
	Decide(s *Spec, e *State, c Call, r *Result, next *State)
	// Commit reports whether to store next once the call's outcome is
	// known: when admitted, but for Draws (see Caps).
	Commit(next *State, admitted bool, cost int64) bool
	// End is where a charge made at now sits in the state next it left
	// (Receipt.Ends), for a Settles algorithm.
	End(s *Spec, next *State, now int64) int64
	// GiveBack gives back n units of a charge that sits at *end in the live
	// state e, as far as e still holds them.
	GiveBack(s *Spec, e *State, end *int64, n, now int64)
	// Extra returns e (nil: none live) with n more units of a charge that
	// sat at end, where it held held, charged at now past the limit if need
	// be; and where the charge then sits and how much of it e holds.
	Extra(s *Spec, e *State, end, held, n, now int64) (next State, at, holds int64)
	// Release drops lease from the live state e; Renew extends it by one
	// lease from now, reporting whether e held it (Holds).
	Release(e *State, lease int64)
	Renew(s *Spec, e *State, lease, now int64) bool
}

// base is what an algorithm does unless its file says otherwise: so many
// per window, nothing derived, Commit on admission, no settling, no slots.
type base struct{}

func (base) Derive(*Spec) {}

func (base) Describe(s *Spec) string {
	return fmt.Sprintf("%s: %s %d per %s", s.Name, s.Algorithm, s.Quota, s.Window)
}

func (base) Args(s *Spec) [3]int64 { return [3]int64{s.Quota, s.Window.Milliseconds(), 0} }

func (base) Header(s *Spec) (int64, time.Duration) { return s.Quota, s.Window }

// Share divides the quota, at least 1, and sets the rate to it, as the
// constructors of counted limits do.
func (base) Share(s *Spec, n int64) bool {
	s.Quota = max(s.Quota/n, 1)
	s.Rate = float64(s.Quota)
	return true
}

func (base) Commit(_ *State, admitted bool, _ int64) bool { return admitted }
func (base) End(*Spec, *State, int64) int64               { return 0 }
func (base) GiveBack(*Spec, *State, *int64, int64, int64) {}
func (base) Release(*State, int64)                        {}
func (base) Renew(*Spec, *State, int64, int64) bool       { return false }
func (base) Extra(*Spec, *State, int64, int64, int64, int64) (State, int64, int64) {
	return State{}, 0, 0
}
