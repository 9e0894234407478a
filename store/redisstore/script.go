package redisstore

import (
	"fmt"
	"slices"
	"strings"

	_ "embed"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

//go:embed lua/engine.lua
var engineFile string

//go:embed lua/suppressed.lua
var suppressedFile string

// engineSource is the engine with its built-in algorithms kept in files of
// their own spliced in.
var engineSource = strings.Replace(engineFile, "--@builtin: lua/suppressed.lua\n", suppressedFile, 1)

// script is the engine a store runs: the built-in one, or one with the
// store's custom algorithms compiled in.
type script struct {
	src string
	sha string
}

// WithAlgorithm registers a custom algorithm, run by limits built with
// ratekit.Custom(name, …). source is a Lua function following the engine's
// contract (see lua/engine.lua and the package doc):
//
//	function(key, p1, p2, p3)
//	  -- read state with redis.call; write nothing
//	  return allowed, remaining, reset_us, retry_us, flags,
//	         after_remaining, after_reset_us, delay_us, op, a, b, c
//	end
//
// where op is nil, 'incr' (INCRBY cost), 'set' (SET a PX b), 'hincr' or
// 'zadd', and cost, charge and clock() are in scope. A store with custom
// algorithms runs its own copy of the engine.
func WithAlgorithm(name string, source string) Option {
	return func(s *Store) {
		if s.custom == nil {
			s.custom = map[string]string{}
		}
		s.custom[name] = source
	}
}

// WithRandom sets the source of the uniform draws in [0, 1) that decide
// calls of Suppressed limits in their probabilistic range (default
// math/rand/v2's Float64). It must be safe for concurrent use. The draw is
// made in Go and passed to the script, because Redis seeds Lua's
// math.random identically for every script; tests inject draws here.
func WithRandom(f func() float64) Option {
	return func(s *Store) {
		if f != nil {
			s.random = f
		}
	}
}

// suppressed reports whether limits hold a Suppressed limit, whose calls
// carry a draw.
func suppressed(limits []ratekit.Limit) bool {
	for _, l := range limits {
		if l.Spec().Algorithm == store.Suppressed {
			return true
		}
	}
	return false
}

// buildScript returns the engine with custom algorithms added.
func buildScript(custom map[string]string) (*script, error) {
	if len(custom) == 0 {
		return &script{src: engineSource, sha: redis.NewScript(engineSource).Hash()}, nil
	}
	names := make([]string, 0, len(custom))
	for name := range custom {
		names = append(names, name)
	}
	slices.Sort(names) // one source, one SHA, whatever the map order
	var b strings.Builder
	for _, name := range names {
		src := custom[name]
		if err := store.CheckAlgorithmName(name); err != nil {
			// err reads "ratekit: algorithm name ...": one prefix is enough.
			return nil, fmt.Errorf("ratekit: redisstore: %s", strings.TrimPrefix(err.Error(), "ratekit: "))
		}
		if strings.TrimSpace(src) == "" {
			return nil, fmt.Errorf("ratekit: redisstore: custom algorithm %q has no source", name)
		}
		fmt.Fprintf(&b, "algorithms[%q] = %s\n", name, src)
	}
	src := strings.Replace(engineSource, "--@custom", b.String(), 1)
	return &script{src: src, sha: redis.NewScript(src).Hash()}, nil
}
