package algo

import (
	"fmt"
	"time"
)

// custom holds the generic rules of a custom algorithm (ratekit.Custom):
// Lua a user registers with a Redis store, which alone decides it. It is
// no Algorithm: memstore cannot run it.
type custom struct{}

func (custom) Caps() Caps { return 0 }

func (custom) Validate(s *Spec, _ bool) Fault {
	if f := modifiers(s, takes{params: true}); f.Field != "" {
		return f
	}
	if why := CustomName(s.Algorithm); why != "" {
		return fault("algorithm", fmt.Sprintf("%q %s", s.Algorithm, why))
	}
	if f := count("capacity", s.Quota); f.Field != "" {
		return f
	}
	return Window("window", s.Window)
}

func (custom) Derive(*Spec) {}

func (custom) Describe(s *Spec) string { return perWindow(s) }

// Args: the algorithm's own parameters.
func (custom) Args(s *Spec) [3]int64 { return s.Params }

func (custom) Header(s *Spec) (int64, time.Duration) { return s.Quota, s.Window }

// Share: none; a custom algorithm's parameters mean what its Lua says.
func (custom) Share(*Spec, int64) bool { return false }

// CustomName returns why a cannot name a custom algorithm, or "".
func CustomName(a string) string {
	if _, ok := Lookup(a); ok {
		return "is built in"
	}
	if len(a) == 0 || len(a) > 16 {
		return "must be 1 to 16 characters"
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return "may hold only [a-z0-9_]"
		}
	}
	return ""
}
