package main

import (
	"fmt"
	"slices"
	"strings"
)

// showCommands is the -commands flag: print each contestant's commands
// after a scenario's table.
var showCommands bool

// cmdStat is one command's line of INFO commandstats over a run.
type cmdStat struct{ calls, usec float64 }

// printCommands prints, per contestant, each Redis command it ran: calls per
// decision and µs per call (Redis's usec_per_call), medians of the rounds.
// A script's µs include the commands it runs, which Redis 7 also counts on
// their own lines: the script's line less its commands' is the Lua around
// them (argument and reply conversions, the script's own code).
func printCommands(names []string, results map[string][]result) {
	fmt.Print("\n| contestant | command | calls/dec | µs/call | µs/dec |\n|---|---|---:|---:|---:|\n")
	for _, name := range names {
		rs := results[name]
		var cmds []string
		for _, r := range rs {
			for c := range r.byCmd {
				if !slices.Contains(cmds, c) {
					cmds = append(cmds, c)
				}
			}
		}
		// scripts first, then the commands they run, by name
		slices.SortFunc(cmds, func(a, b string) int {
			if sa, sb := isScript(a), isScript(b); sa != sb {
				if sa {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		for _, c := range cmds {
			perDec := medianOf(rs, func(r result) float64 { return r.byCmd[c].calls / r.decisions })
			perCall := medianOf(rs, func(r result) float64 {
				if st := r.byCmd[c]; st.calls > 0 {
					return st.usec / st.calls
				}
				return 0
			})
			usecDec := medianOf(rs, func(r result) float64 { return r.byCmd[c].usec / r.decisions })
			fmt.Printf("| %s | %s | %.3f | %.2f | %.2f |\n", name, c, perDec, perCall, usecDec)
		}
	}
}

// isScript reports whether a command runs a script or function.
func isScript(cmd string) bool {
	return strings.HasPrefix(cmd, "eval") || strings.HasPrefix(cmd, "fcall")
}
