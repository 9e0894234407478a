package redistest

import (
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"

	"github.com/ratekit/ratekit/store/storetest"
)

// Clock is a fake clock shared by memstore and miniredis.
type Clock = storetest.Clock

// NewClock returns a Clock at start that drives minis: Advance moves
// miniredis's TIME (SetTime) and expires its keys (FastForward) together, as
// real time would; memstore reads Now.
//
// miniredis deletes a key as its TTL reaches 0, one millisecond before a
// real Redis does (see NewRedisClock): under this clock a key never reads
// PTTL 0.
func NewClock(start time.Time, minis ...*miniredis.Miniredis) *Clock {
	var follow []func(time.Time, time.Duration)
	for _, m := range minis {
		m.SetTime(start)
		follow = append(follow, func(now time.Time, d time.Duration) {
			m.SetTime(now)
			m.FastForward(d)
		})
	}
	return storetest.NewClock(start, follow...)
}

// NewRedisClock returns a Clock at start that drives minis as a real Redis's
// own clock would: Advance moves TIME (SetTime, to the microsecond) and ages
// the TTL of every key of database 0 by the milliseconds the clock's
// millisecond moved, as Redis, which keeps a key's expiry as an absolute
// millisecond and reads time at millisecond resolution for it. A key set
// with PX 5 then answers PTTL 5, 4, 3, 2, 1, 0 and still exists at 0; it is
// gone 1 ms later (a real Redis expires a key when now > its expiry time).
//
// miniredis's FastForward deletes a key when its TTL reaches 0, so the
// clock ages keys itself: a key whose TTL reaches exactly 0 keeps a TTL of
// 1 ns, which PTTL reads as 0 (it truncates to the millisecond) and the next
// step that moves the millisecond drops. A key given an absolute expiry
// (PXAT, PEXPIREAT) gets from miniredis a TTL with a fraction of a
// millisecond, which PTTL would read 1 ms short of Redis's: before each
// script the clock rounds such a TTL up to the millisecond, as Redis reads
// it. Keep ClockTTL off on minis. The minis must be used from one
// goroutine at a time while Advance runs.
func NewRedisClock(start time.Time, minis ...*miniredis.Miniredis) *Clock {
	var follow []func(time.Time, time.Duration)
	for _, m := range minis {
		m.Server().SetPreHook(func(_ *server.Peer, cmd string, _ ...string) bool {
			if !strings.HasPrefix(cmd, "EVAL") && !strings.HasPrefix(cmd, "FCALL") {
				return false // a script's own calls come here too, under miniredis's lock
			}
			db := m.DB(0)
			for _, k := range db.Keys() {
				if ttl := db.TTL(k); ttl > time.Nanosecond && ttl%time.Millisecond != 0 {
					db.SetTTL(k, ttl.Truncate(time.Millisecond)+time.Millisecond)
				}
			}
			return false
		})
		m.SetTime(start)
		last := start.UnixMilli()
		follow = append(follow, func(now time.Time, _ time.Duration) {
			m.SetTime(now)
			ms := now.UnixMilli()
			age(m, time.Duration(ms-last)*time.Millisecond)
			last = ms
		})
	}
	return storetest.NewClock(start, follow...)
}

// age takes d (whole milliseconds) off the TTL of every key of m's database
// 0 that has one, deleting those whose TTL goes below 0 and keeping those
// at exactly 0 with 1 ns (see NewRedisClock).
func age(m *miniredis.Miniredis, d time.Duration) {
	if d <= 0 {
		return
	}
	db := m.DB(0)
	for _, k := range db.Keys() {
		ttl := db.TTL(k) // 0: no TTL
		if ttl <= 0 {
			continue
		}
		if ttl > time.Nanosecond && ttl%time.Millisecond != 0 { // an absolute expiry: Redis reads it rounded up
			ttl = ttl.Truncate(time.Millisecond) + time.Millisecond
		}
		switch left := ttl.Truncate(time.Millisecond) - d; {
		case left < 0:
			db.Del(k)
		case left == 0:
			db.SetTTL(k, time.Nanosecond)
		default:
			db.SetTTL(k, left)
		}
	}
}

// Sleep lets real time pass: the Advance of a harness on the real clock.
func Sleep(d time.Duration) { time.Sleep(d) }
