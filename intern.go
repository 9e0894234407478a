package ratekit

import (
	"runtime"
	"sync"
	"weak"
)

// defs holds, weakly, the one *limitDef of each distinct definition in use:
// equal definitions share a pointer, so Limits compare equal with == exactly
// when their definitions do, and a definition goes once no Limit holds it.
var defs sync.Map // limitDef -> weak.Pointer[limitDef]

// intern returns the shared *limitDef equal to c.
func intern(c limitDef) *limitDef {
	for {
		old, found := defs.Load(c)
		if found {
			if p := old.(weak.Pointer[limitDef]).Value(); p != nil {
				return p
			}
		}
		p := new(limitDef)
		*p = c
		w := weak.Make(p)
		if found && !defs.CompareAndSwap(c, old, w) {
			continue // another caller replaced the collected one first
		}
		if !found {
			if _, raced := defs.LoadOrStore(c, w); raced {
				continue
			}
		}
		runtime.AddCleanup(p, func(c limitDef) { defs.CompareAndDelete(c, w) }, c)
		return p
	}
}
