package algo

import "fmt"

// custom holds the generic rules of a custom algorithm (ratekit.Custom):
// Lua a user registers with a Redis store, which alone decides it. It is
// no Algorithm: memstore cannot run it.
type custom struct{ base }

func (custom) Caps() Caps { return 0 }

func (custom) Validate(s *Spec, _ bool) Fault {
	var c check
	c.modifiers(s, takes{params: true})
	why := CustomName(s.Algorithm)
	c.fail(why != "", "algorithm", "%q %s", s.Algorithm, why)
	c.count("capacity", s.Quota)
	c.window("window", s.Window)
	return c.Fault
}

// Args: the algorithm's own parameters.
// Shape: every parameter, since only the algorithm's Lua knows what they
// mean: new numbers start fresh state.
func (custom) Shape(s *Spec) string {
	return fmt.Sprintf("%d|%s|%v", s.Quota, s.Window, s.Params)
}

func (custom) Args(s *Spec, _ int64) [3]int64 { return s.Params }

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
