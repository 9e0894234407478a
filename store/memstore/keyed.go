package memstore

import "strings"

// The lockouts and reputations of a shard are maps keyed by subject and
// policy ID; keep and forgetKeyed update either. The caller holds sh.mu.

// keep stores v, which expires at expireMS, under k in m, one of sh's keyed
// maps, whose peak size is *peak. The caller accounts for a new entry (see
// admit).
func keep[V any](sh *shard, m map[entryKey]V, peak *int, k entryKey, v V, expireMS int64) {
	k.subject = strings.Clone(k.subject) // see slotOf
	m[k] = v
	sh.minExpireMS = min(sh.minExpireMS, expireMS)
	*peak = max(*peak, len(m))
}

// forgetKeyed deletes the entry under k in m, one of a shard's keyed maps,
// if any.
func forgetKeyed[V any](s *Store, m map[entryKey]V, k entryKey) {
	n := len(m)
	delete(m, k)
	if len(m) != n && s.maxEntries > 0 {
		s.count.Add(-1)
	}
}
