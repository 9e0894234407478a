package memstore

import (
	"context"

	"github.com/ratekit/ratekit"
)

// Lockout implements ratekit.LockoutStore with the arithmetic of
// store/redisstore/lua/lockout.lua: the block first, one log of attempts
// (capped at the largest allowance + 1), one block per window.
func (s *Store) Lockout(_ context.Context, key string, p *ratekit.LockoutPolicy, op ratekit.LockoutOp) (ratekit.LockoutDecision, error) {
	if key == "" {
		return ratekit.LockoutDecision{}, ratekit.ErrEmptyKey
	}
	k := entryKey{subject: key, limit: "lockout:" + p.ID()}
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if op == ratekit.LockoutReset {
		delete(sh.entries, k)
		return ratekit.LockoutDecision{}, nil
	}
	nowUS := s.now().UnixMicro()
	nowMS := nowUS / 1000
	sh.sweep(nowMS)
	e, _ := sh.live(k, nowMS)
	if len(e.blocks) != len(p.Windows) {
		e.blocks = make([]int64, len(p.Windows))
	}
	longest, logCap := p.Longest().Milliseconds(), int64(0)
	for _, w := range p.Windows {
		logCap = max(logCap, w.Attempts+1)
	}

	scope, left := 0, int64(0)
	for i, exp := range e.blocks {
		if pttl := exp - nowMS; pttl > left {
			scope, left = i+1, pttl
		}
	}
	record := func() {
		log := e.log[:0:0]
		for _, at := range e.log {
			if at > nowUS-longest*1000 {
				log = append(log, at)
			}
		}
		log = append(log, nowUS)
		if int64(len(log)) > logCap {
			log = log[int64(len(log))-logCap:]
		}
		e.log = log
	}
	switch {
	case scope > 0 && op == ratekit.LockoutAttempt && p.ExtendBlock:
		record()
		left = p.Windows[scope-1].Block.Milliseconds()
		e.blocks[scope-1] = nowMS + left
	case scope == 0 && op == ratekit.LockoutAttempt:
		record()
		for i, w := range p.Windows {
			if count(e.log, nowUS-w.Window.Microseconds()) > w.Attempts {
				block := w.Block.Milliseconds()
				e.blocks[i] = nowMS + block
				if block > left {
					scope, left = i+1, block
				}
			}
		}
	}
	if op == ratekit.LockoutAttempt {
		e.expireMS = nowMS + longest
		for _, exp := range e.blocks {
			e.expireMS = max(e.expireMS, exp)
		}
		sh.entries[k] = e
	}
	d := ratekit.LockoutDecision{Allowed: scope == 0, RetryAfter: ms(left), Counts: make([]int64, len(p.Windows))}
	for i, w := range p.Windows {
		d.Counts[i] = count(e.log, nowUS-w.Window.Microseconds())
	}
	if scope > 0 {
		d.Scope, d.Limit = p.Windows[scope-1].Scope, p.Windows[scope-1].Attempts
	}
	return d, nil
}

// count returns the attempts after from (µs): the window (from, now].
func count(log []int64, from int64) int64 {
	n := int64(0)
	for _, at := range log {
		if at > from {
			n++
		}
	}
	return n
}
