// Package algo is the kit's algorithm core: one file per built-in algorithm
// holds its rules and the arithmetic memstore runs, which store/redisengine's
// Lua mirrors (see docs/architecture.md, "One algorithm, one file").
package algo

import (
	"fmt"
	"math"
	"time"

	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/carry"
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
	Period                                      calendar.Period
	Location                                    *time.Location
	Carry                                       carry.Rule
}

// State is one limit's state for one subject, as memstore keeps it: a
// count or a theoretical arrival time (µs), and the millisecond through
// which it lives, like a Redis key.
type State struct {
	Value    int64
	ExpireMS int64
	Unit     int64 // bucket: the emission interval (µs) Value was written under

	Buckets []Bucket // sliding, suppressed: counts by bucket, oldest first
	Log     []int64  // log: admitted requests (µs); inflight: leases as pairs (expiry µs, id)
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

// A Result is ratekit.LimitState without its Limit and Blocked.
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
	Cacheable Caps = 1 << iota // a denial stands until its RetryAfter unless reset or settled
	Leasable                   // quota units can be leased and spent later, passing no burst it refuses
	// Holds: an admitted call (a reserve of cost 0 too) holds one slot,
	// named by its lease, until released or lapsed; no window in headers.
	Holds
	Draws          // a call needs a uniform draw; declined calls count too (see Commit)
	SettlesAtReset // a charge can be settled; it sits at the state's end (window end, TAT)
	SettlesAtCall  // a charge can be settled; it sits at the call's time
	EndsOnMS       // the state ends on a whole millisecond (an absolute expiry): a receipt's end is the call's ms plus the reset
	Settles        = SettlesAtReset | SettlesAtCall
)

// Rules are what the kit reads of an algorithm, a custom one's too (see
// Of). Only Derive and Share change s. Implementations are stateless, safe
// for concurrent use.
type Rules interface {
	Caps() Caps
	Validate(s *Spec, shadow bool) Fault // the first fault, in ratekit's order
	Derive(s *Spec)                      // sets the derived values (Interval, Hard)
	Describe(s *Spec) string             // Limit.String but for the block
	// Shape returns the parameters that give the state its form, "" when
	// there are none: a limit's state is identified by its name, algorithm
	// and shape, so new numbers keep it (see package carry), a new shape
	// starts it afresh.
	Shape(s *Spec) string
	Args(s *Spec, now int64) [3]int64 // the three parameters the Redis engine sends for a call at now (µs)
	// Period returns the stretch of time [start, end) around now (µs) over
	// which Args stays the same: all time, unless the limit follows the clock.
	Period(s *Spec, now int64) (start, end int64)
	// Header returns the quota and window RateLimit-Policy describes (0: none).
	Header(s *Spec) (quota int64, window time.Duration)
	Share(s *Spec, n int64) bool // makes s one of n instances' share, or reports false
}

// An Algorithm is a built-in algorithm (see Lookup): its Rules and the
// arithmetic memstore runs, which the engine's Lua mirrors.
type Algorithm interface {
	Rules
	// Decide decides c against the live state e (nil: none), which it never
	// changes, into *r and, when c charges and the limit admits (Draws: when
	// c charges), the state to store into *next. Both are zero on entry.
	Decide(s *Spec, e *State, c Call, r *Result, next *State)
	// Normalize rewrites the live state e, written under other numbers, in
	// s's terms, as the engine's Lua rewrites it on reading it: once, so
	// that it then changes at s's pace (a bucket's TAT in another interval).
	// Most states need nothing.
	Normalize(s *Spec, e *State, now int64)
	// Commit reports whether to store next once the call's outcome is known.
	Commit(next *State, admitted bool, cost int64) bool
	// End is where a charge made at now sits in next (Receipt.Ends).
	End(s *Spec, next *State, now int64) int64
	// GiveBack gives back n units of a charge that sits at *end in the live
	// state e, as far as e still holds them.
	GiveBack(s *Spec, e *State, end *int64, n, now int64)
	// Extra returns e (nil: none live) with n more units of a charge that
	// sat at end and held held, past the limit if need be, and where the
	// charge then sits and how much of it the state holds.
	Extra(s *Spec, e *State, end, held, n, now int64) (next State, at, holds int64)
	Release(e *State, lease int64)                  // drops lease from the live state e
	Renew(s *Spec, e *State, lease, now int64) bool // extends lease by one from now, if e holds it
}

// base is what an algorithm does unless its file says otherwise: so many
// per window, nothing derived, Commit on admission, a charge that sits at
// the call's time (SettlesAtCall), no settling, no slots.
type base struct{}

func (base) Derive(*Spec) {}

func (base) Shape(*Spec) string { return "" }

func (base) Describe(s *Spec) string {
	return fmt.Sprintf("%s: %s %d per %s", s.Name, s.Algorithm, s.Quota, s.Window)
}

func (base) Args(s *Spec, _ int64) [3]int64 { return [3]int64{s.Quota, s.Window.Milliseconds(), 0} }

func (base) Period(*Spec, int64) (int64, int64) { return math.MinInt64, math.MaxInt64 }

func (base) Header(s *Spec) (int64, time.Duration) { return s.Quota, s.Window }

// Share divides the quota (at least 1) and sets the rate to it.
func (base) Share(s *Spec, n int64) bool {
	s.Quota = max(s.Quota/n, 1)
	s.Rate = float64(s.Quota)
	return true
}

func (base) Normalize(*Spec, *State, int64)               { return }
func (base) Commit(_ *State, admitted bool, _ int64) bool { return admitted }
func (base) End(_ *Spec, _ *State, now int64) int64       { return now }
func (base) GiveBack(*Spec, *State, *int64, int64, int64) {}
func (base) Release(*State, int64)                        {}
func (base) Renew(*Spec, *State, int64, int64) bool       { return false }
func (base) Extra(*Spec, *State, int64, int64, int64, int64) (State, int64, int64) {
	return State{}, 0, 0
}
