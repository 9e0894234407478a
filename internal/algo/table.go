package algo

// Lookup returns the built-in algorithm named name: the one list of the
// kit's algorithms.
func Lookup(name string) (Algorithm, bool) {
	switch name {
	case FixedWindow:
		return &fixed{}, true
	case SlidingWindow:
		return &sliding{}, true
	case SlidingLog:
		return &slidingLog{}, true
	case GCRA, TokenBucket, LeakyBucket:
		return &bucket{}, true
	case Suppressed:
		return &suppressed{}, true
	case InFlight:
		return &inFlight{}, true
	case Calendar:
		return &periodic{}, true
	}
	return nil, false
}

// Of returns the rules of the algorithm named name: a built-in one's, else
// the generic rules of a custom algorithm (custom.go).
func Of(name string) Rules {
	if a, ok := Lookup(name); ok {
		return a
	}
	return custom{}
}
