package algo

import (
	"math"
	"time"
)

// Numbers are a limit's numbers, the parameters an override or a redeploy
// may change without changing the limit's state (see package carry): its
// quota, rate, window, longest queueing delay, block and suppression
// factor, as integers exact inside Lua (below 2^53): durations in µs,
// floats as the two 32-bit halves of their bits. The Redis engine keeps an
// override's Numbers beside its Lua arguments and reads them back from a
// decision's reply.
type Numbers [NumbersLen]int64

// NumbersLen is the number of integers of Numbers.
const NumbersLen = 8

// NumbersOf returns s's numbers.
func NumbersOf(s *Spec) Numbers {
	rate, factor := math.Float64bits(s.Rate), math.Float64bits(s.Factor)
	return Numbers{s.Quota, int64(rate >> 32), int64(rate & math.MaxUint32), s.Window.Microseconds(),
		s.MaxWait.Microseconds(), s.Block.Microseconds(), int64(factor >> 32), int64(factor & math.MaxUint32)}
}

// Apply sets s's numbers to n, leaving every other field as it is, but
// for a block: s gets n's only if it has one (an override changes a block,
// adds none, as in_force in the engine's lua/prelude.lua; one set through
// other numbers of the limit, with a block, may meet it without).
func (n Numbers) Apply(s *Spec) {
	block := time.Duration(n[5]) * time.Microsecond
	if s.Block == 0 {
		block = 0
	}
	s.Quota = n[0]
	s.Rate = math.Float64frombits(uint64(n[1])<<32 | uint64(n[2]))
	s.Window = time.Duration(n[3]) * time.Microsecond
	s.MaxWait = time.Duration(n[4]) * time.Microsecond
	s.Block = block
	s.Factor = math.Float64frombits(uint64(n[6])<<32 | uint64(n[7]))
}
