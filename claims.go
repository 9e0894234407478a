package ratekit

import (
	"reflect"
	"runtime"
	"sync"
	"weak"
)

// claims records, per store, which live Limiter uses each unnamed limit, so
// that New can refuse a second Limiter whose unnamed limit would share the
// first one's counters by accident. Entries go when their Limiter is
// collected.
var claims = struct {
	sync.Mutex
	byStore map[any]map[string]weak.Pointer[Limiter]
}{byStore: map[any]map[string]weak.Pointer[Limiter]{}}

// claimed is what a collected Limiter gives back.
type claimed struct {
	store any
	ids   []string
}

// claim records l's unnamed limits, or reports the first one another live
// Limiter on the same store already uses.
func claim(l *Limiter) error {
	if !reflect.TypeOf(l.store).Comparable() {
		return nil // a store that cannot be told apart from another is not tracked
	}
	var ids []string
	for _, lim := range l.limits {
		if !lim.def().named {
			ids = append(ids, lim.def().id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	claims.Lock()
	defer claims.Unlock()
	byID := claims.byStore[l.store]
	if taken(byID, ids, l) {
		// A Limiter that is unreachable but not yet collected still looks
		// alive: collect once, so that the answer does not depend on when
		// the collector last ran.
		runtime.GC()
	}
	for i, id := range ids {
		if other := byID[id].Value(); other != nil && other != l {
			name := l.limits[0].Name()
			for _, lim := range l.limits {
				if lim.def().id == ids[i] {
					name = lim.Name()
				}
			}
			return &LimitError{Limit: name, Field: "name", Reason: "is the default name of a limit that another live Limiter on this store " +
				"already uses, so both would share one counter; name each Limiter's limits apart with Named " +
				"(or name them alike to share on purpose), or use one Limiter for both routes"}
		}
	}
	if byID == nil {
		byID = map[string]weak.Pointer[Limiter]{}
		claims.byStore[l.store] = byID
	}
	for _, id := range ids {
		byID[id] = weak.Make(l)
	}
	runtime.AddCleanup(l, release, claimed{store: l.store, ids: ids})
	return nil
}

// taken reports whether another live Limiter holds one of ids.
func taken(byID map[string]weak.Pointer[Limiter], ids []string, l *Limiter) bool {
	for _, id := range ids {
		if other := byID[id].Value(); other != nil && other != l {
			return true
		}
	}
	return false
}

// release forgets the claims of a collected Limiter.
func release(c claimed) {
	claims.Lock()
	defer claims.Unlock()
	byID := claims.byStore[c.store]
	for _, id := range c.ids {
		if byID[id].Value() == nil {
			delete(byID, id)
		}
	}
	if len(byID) == 0 {
		delete(claims.byStore, c.store)
	}
}
