package memstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/subject"
	"github.com/ratekit/ratekit/lockout"
)

// Lockout implements lockout.Store with the arithmetic of
// store/redisengine/lua/lockout.lua: the block first, one log of attempts
// (capped at the largest allowance + 1), one block per window.
func (s *Store) Lockout(_ context.Context, key string, p *lockout.Policy, op lockout.Op, attempt string) (lockout.Decision, error) {
	if key == "" {
		return lockout.Decision{}, ratekit.ErrEmptyKey
	}
	if op > lockout.Refund {
		return lockout.Decision{}, fmt.Errorf("ratekit: memstore: unknown lockout operation %d", op)
	}
	sub := subject.Key(key)
	k := entryKey{subject: sub, id: p.ID()}
	sh := s.shard(sub)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	nowUS := s.clock()
	nowMS := nowUS / 1000
	s.maybeSweep(sh, nowMS)
	e, ok := sh.lockout(k, nowMS)
	switch op {
	case lockout.Reset:
		forgetKeyed(s, sh.lockouts, k)
		return lockout.Decision{}, nil
	case lockout.Refund:
		if ok { // nothing to refund otherwise
			e.log = refund(e.log, attempt)
			keep(sh, sh.lockouts, &sh.peakLockouts, k, e, e.expireMS)
		}
		return lockout.Decision{}, nil
	}
	if len(e.blocks) != len(p.Windows) {
		e.blocks = make([]int64, len(p.Windows))
	}
	l := lockoutRun{p: p, e: &e, nowUS: nowUS, nowMS: nowMS}
	scope, left := 0, int64(0)
	for i, exp := range e.blocks {
		if pttl := exp - nowMS; pttl > left {
			scope, left = i+1, pttl
		}
	}
	switch {
	case scope > 0 && op == lockout.Attempt && p.ExtendBlock:
		l.record()
		left = p.Windows[scope-1].Block.Milliseconds()
		e.blocks[scope-1] = nowMS + left
		scope, left = l.trip(scope, left)
	case scope == 0 && op == lockout.Attempt:
		l.record()
		scope, left = l.trip(0, 0)
	}
	if op == lockout.Attempt {
		e.expireMS = nowMS + p.Longest().Milliseconds()
		for _, exp := range e.blocks {
			e.expireMS = max(e.expireMS, exp)
		}
		// A new key's first attempt never trips a block (Attempts >= 1):
		// refusing it at the bound forgets no denial.
		if _, held := sh.lockouts[k]; !held && s.maxEntries > 0 && !s.admit(sh, "", nowMS, func() int { return 1 }) {
			return lockout.Decision{}, ErrFull
		}
		keep(sh, sh.lockouts, &sh.peakLockouts, k, e, e.expireMS)
	}
	d := lockout.Decision{Allowed: scope == 0, Counts: make([]int64, len(p.Windows))}
	if scope > 0 {
		d.RetryAfter = time.Duration(max(left*1000, l.room())) * time.Microsecond
	}
	for i := range p.Windows {
		d.Counts[i] = l.count(i)
	}
	if scope > 0 {
		d.Scope, d.Limit = p.Windows[scope-1].Scope, p.Windows[scope-1].Attempts
	}
	if l.seq > 0 {
		d.Attempt = strconv.FormatInt(nowUS, 10) + ":" + strconv.FormatInt(l.seq, 10)
	}
	return d, nil
}

// lockState is one lockout policy's state for one subject: its log of
// attempts, each window's block, and the millisecond at which it expires
// (it lives through it, as a Redis key does).
type lockState struct {
	log      []int64 // the attempts, in µs
	blocks   []int64 // each window's block expiry, in ms
	expireMS int64
}

// lockout returns the lockout state under k if it has not expired at nowMS.
func (sh *shard) lockout(k entryKey, nowMS int64) (lockState, bool) {
	e, ok := sh.lockouts[k]
	if !ok || e.expireMS < nowMS {
		return lockState{}, false
	}
	return e, true
}

// lockoutRun is one lockout call's working state.
type lockoutRun struct {
	p            *lockout.Policy
	e            *lockState
	nowUS, nowMS int64
	seq          int64 // the recorded attempt's number within its µs
}

// record prunes the log to the longest window, appends now and caps it.
func (l *lockoutRun) record() {
	from := l.nowUS - l.p.Longest().Microseconds()
	logCap := int64(0)
	for _, w := range l.p.Windows {
		logCap = max(logCap, w.Attempts+1)
	}
	log := l.e.log[:0:0]
	for _, at := range l.e.log {
		if at > from {
			log = append(log, at)
		}
		if at == l.nowUS {
			l.seq++
		}
	}
	l.seq++
	log = append(log, l.nowUS)
	if int64(len(log)) > logCap {
		log = log[int64(len(log))-logCap:]
	}
	l.e.log = log
}

// trip starts the block of every window past its allowance and returns the
// longest block in force.
func (l *lockoutRun) trip(scope int, left int64) (int, int64) {
	for i, w := range l.p.Windows {
		if l.count(i) > w.Attempts {
			block := w.Block.Milliseconds()
			l.e.blocks[i] = l.nowMS + block
			if block > left {
				scope, left = i+1, block
			}
		}
	}
	return scope, left
}

// count returns the attempts in window i: (now - window, now].
func (l *lockoutRun) count(i int) int64 {
	from := l.nowUS - l.p.Windows[i].Window.Microseconds()
	n := int64(0)
	for _, at := range l.e.log {
		if at > from {
			n++
		}
	}
	return n
}

// room returns, in µs, how long until every window has room for one more
// attempt: until the entry that fills a window to its Attempts leaves it.
func (l *lockoutRun) room() int64 {
	wait := int64(0)
	for _, w := range l.p.Windows {
		from := l.nowUS - w.Window.Microseconds()
		var in []int64 // the window's entries, oldest first
		for _, at := range l.e.log {
			if at > from {
				in = append(in, at)
			}
		}
		if n := int64(len(in)); n >= w.Attempts {
			wait = max(wait, in[n-w.Attempts]-from)
		}
	}
	return wait
}

// refund removes one entry at the attempt's microsecond ("<µs>:<n>").
func refund(log []int64, attempt string) []int64 {
	us, _, _ := strings.Cut(attempt, ":")
	at, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return log
	}
	for i, t := range log {
		if t == at {
			return append(log[:i:i], log[i+1:]...)
		}
	}
	return log
}
