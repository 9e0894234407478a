package redisengine

import (
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/ratekit/ratekit/store"
)

//go:embed lua/engine.lua
var engineFile string

//go:embed lua/suppressed.lua
var suppressedFile string

//go:embed lua/reputation.lua
var reputationFile string

//go:embed lua/settle.lua
var settleFile string

// engineBody is the engine with its built-in algorithms kept in files of
// their own spliced in.
var engineBody = strings.Replace(engineFile, "--@builtin: lua/suppressed.lua\n", suppressedFile, 1)

// script is one Lua script: its source and SHA-1, for EVALSHA and EVAL.
type script struct {
	src, sha string
}

func newScript(src string) script {
	sum := sha1.Sum([]byte(src))
	return script{src: src, sha: hex.EncodeToString(sum[:])}
}

// The programs of the engine, by what they run.
const (
	progDecide = iota
	progReputation
	progSettle
	programs
)

// sources are an engine's programs: each as a script (EVALSHA, EVAL) and as
// a function of one library (FUNCTION LOAD once per node, then FCALL).
type sources struct {
	scripts   [programs]script
	functions [programs]string
	library   string // the library's code, for FUNCTION LOAD REPLACE
}

// buildSources returns the programs with the custom algorithms added to the
// engine. The library's name and its functions' names hold a hash of its
// code, so stores with different algorithms, or different versions of the
// kit, never replace each other's library.
func buildSources(custom map[string]string) (*sources, error) {
	body := engineBody
	if len(custom) > 0 {
		names := make([]string, 0, len(custom))
		for name := range custom {
			names = append(names, name)
		}
		slices.Sort(names) // one source, one SHA, whatever the map order
		var b strings.Builder
		for _, name := range names {
			if err := store.CheckAlgorithmName(name); err != nil {
				return nil, err
			}
			if strings.TrimSpace(custom[name]) == "" {
				return nil, fmt.Errorf("custom algorithm %q has no source", name)
			}
			fmt.Fprintf(&b, "algorithms[%q] = %s\n", name, custom[name])
		}
		body = strings.Replace(body, "--@custom", b.String(), 1)
	}
	s := &sources{}
	s.scripts[progDecide] = newScript("local call_keys, call_args = KEYS, ARGV\n" + body + "\nreturn decide(call_keys, call_args)\n")
	s.scripts[progReputation] = newScript(reputationFile)
	// settle uses the engine's parsing: its script is the engine's body too
	s.scripts[progSettle] = newScript("local call_keys, call_args = KEYS, ARGV\n" + body +
		"\nlocal function settle(KEYS, ARGV)\n" + settleFile + "\nend\nreturn settle(call_keys, call_args)\n")

	// The library: the engine's body defines decide; reputation and settle
	// become functions of (KEYS, ARGV).
	code := body + "\nlocal function reputation(KEYS, ARGV)\n" + reputationFile + "\nend\n" +
		"\nlocal function settle(KEYS, ARGV)\n" + settleFile + "\nend\n"
	sum := sha1.Sum([]byte(code))
	lib := "ratekit_" + hex.EncodeToString(sum[:8])
	var reg strings.Builder
	for i, f := range [programs]string{"decide", "reputation", "settle"} {
		s.functions[i] = lib + "_" + f
		// No flags: FCALL is refused at once on a full Redis (noeviction),
		// and the store then runs the script, which decides denials without
		// a write (see Engine).
		fmt.Fprintf(&reg, "redis.register_function{function_name='%s', callback=%s}\n", s.functions[i], f)
	}
	s.library = "#!lua name=" + lib + "\n" + code + "\n" + reg.String()
	return s, nil
}
