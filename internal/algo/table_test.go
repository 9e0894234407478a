package algo

import (
	"fmt"
	"testing"
	"time"
)

// Every built-in name looks up its algorithm, is no custom name, and keeps
// its own rules; any other name gets a custom algorithm's.
func TestTable(t *testing.T) {
	caps := map[string]Caps{
		FixedWindow: Cacheable | Leasable | SettlesAtReset, SlidingWindow: Cacheable | SettlesAtCall,
		SlidingLog: Cacheable | SettlesAtCall, GCRA: Cacheable | SettlesAtReset, TokenBucket: Cacheable | SettlesAtReset,
		LeakyBucket: Cacheable | SettlesAtReset, Suppressed: Draws, InFlight: Holds, Calendar: Cacheable | Leasable | SettlesAtReset | EndsOnMS,
	}
	for name, want := range caps {
		a, ok := Lookup(name)
		if !ok || a.Caps() != want || fmt.Sprintf("%T", Of(name)) != fmt.Sprintf("%T", a) || CustomName(name) != "is built in" {
			t.Errorf("%s: %v %v; want caps %v, built in", name, a, ok, want)
		}
	}
	if _, ok := Lookup("mine"); ok || fmt.Sprintf("%T", Of("mine")) != "algo.custom" || CustomName("mine") != "" {
		t.Error("an unknown name must be a custom algorithm")
	}
	s := Spec{Algorithm: "mine", Quota: 10, Window: time.Minute, Params: [3]int64{1, 2, 3}}
	if Of("mine").Args(&s, 0) != s.Params || Of("mine").Share(&s, 2) || s.Quota != 10 {
		t.Error("a custom algorithm sends its own parameters and has no share")
	}
}

// A check keeps the first fault.
func TestCheckKeepsFirstFault(t *testing.T) {
	var c check
	c.count("quota", 0)
	c.window("window", 0)
	if c.Field != "quota" || c.Reason != "must be between 1 and 2^53-1 (got 0)" {
		t.Errorf("%+v", c.Fault)
	}
}
