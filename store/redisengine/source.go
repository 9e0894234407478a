package redisengine

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/ratekit/ratekit/internal/algo"
)

// The engine's Lua: the prelude, the built-in algorithms and the programs.
//
//go:embed lua/*.lua
var luaFiles embed.FS

// luaFile returns lua/<name>.lua, ending in a newline.
func luaFile(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err) // embedded: a missing file is a build mistake
	}
	return strings.TrimRight(string(b), "\n") + "\n"
}

// script is one Lua script: its source and SHA-1, for EVALSHA and EVAL.
type script struct {
	src, sha string
}

// The programs of the engine, by what they run.
const (
	progDecide = iota
	progReputation
	progSettle
	progOverride
	programs
)

// sources are an engine's programs: each as a script (EVALSHA, EVAL) and as
// a function of one library (FUNCTION LOAD once per node, then FCALL).
type sources struct {
	scripts   [programs]script
	functions [programs]string
	library   string // the library's code, for FUNCTION LOAD REPLACE
}

// buildSources returns the programs with the custom algorithms added. The
// library's name holds a hash of its code, so stores with different
// algorithms, or versions of the kit, never replace each other's library.
func buildSources(custom map[string]string) (*sources, error) {
	preludeSrc, decideSrc, settleSrc, reputationSrc, overrideSrc := luaFile("prelude"), luaFile("engine"), luaFile("settle"),
		luaFile("reputation"), luaFile("override")
	// Then every other file of lua/, an algorithm, in name order, and the
	// custom algorithms by name: one set of algorithms, one source, one SHA.
	var b strings.Builder
	b.WriteString(preludeSrc)
	files, _ := fs.Glob(luaFiles, "lua/*.lua") // sorted; the pattern is valid
	for _, f := range files {
		switch name := strings.TrimSuffix(path.Base(f), ".lua"); name {
		case "prelude", "engine", "settle", "reputation", "override": // not algorithms
		default:
			b.WriteString(luaFile(name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(custom)) {
		if why := algo.CustomName(name); why != "" {
			return nil, fmt.Errorf("algorithm name %q %s", name, why)
		}
		if strings.TrimSpace(custom[name]) == "" {
			return nil, fmt.Errorf("custom algorithm %q has no source", name)
		}
		fmt.Fprintf(&b, "algorithms[%q] = custom(\n%s\n)\n", name, custom[name])
	}
	algorithms := b.String()
	// A script calls its program with the script's KEYS and ARGV, which the
	// prelude's upvalues of the same names hide.
	asScript := func(body, program string) script {
		src := "local call_keys, call_args = KEYS, ARGV\n" + body + "return " + program + "(call_keys, call_args)\n"
		sum := sha1.Sum([]byte(src))
		return script{src: src, sha: hex.EncodeToString(sum[:])}
	}
	s := &sources{}
	s.scripts[progDecide] = asScript(algorithms+decideSrc, "decide")
	s.scripts[progReputation] = asScript(preludeSrc+reputationSrc, "reputation")
	s.scripts[progSettle] = asScript(algorithms+settleSrc, "settle")
	s.scripts[progOverride] = asScript(preludeSrc+overrideSrc, "override")

	// The library: every program, each a function of (keys, args).
	code := algorithms + decideSrc + settleSrc + reputationSrc + overrideSrc
	sum := sha1.Sum([]byte(code))
	lib := "ratekit_" + hex.EncodeToString(sum[:8])
	var reg strings.Builder
	for i, f := range [programs]string{"decide", "reputation", "settle", "override"} {
		s.functions[i] = lib + "_" + f
		// No flags: FCALL is refused at once on a full Redis (noeviction),
		// and the engine then runs the script, which may decide a denial.
		fmt.Fprintf(&reg, "redis.register_function{function_name='%s', callback=%s}\n", s.functions[i], f)
	}
	s.library = "#!lua name=" + lib + "\n" + code + reg.String()
	return s, nil
}
