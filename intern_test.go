package ratekit

import (
	"runtime"
	"testing"
	"time"
)

// TestLimitsBuiltAlikeAreEqual: equal definitions share one pointer, so ==
// on Limits means what it meant when a Limit held its fields.
func TestLimitsBuiltAlikeAreEqual(t *testing.T) {
	a := FixedWindow(10, time.Minute).Named("api").Block(time.Hour)
	b := FixedWindow(10, time.Minute).Block(time.Hour).Named("api")
	if a != b || a.d != b.d {
		t.Fatalf("limits built alike differ: %v, %v", a, b)
	}
	for _, other := range []Limit{
		FixedWindow(10, time.Minute).Named("api"),
		FixedWindow(11, time.Minute).Named("api").Block(time.Hour),
		a.Shadow(),
		GCRA(10, time.Minute, 10).Named("api").Block(time.Hour),
		{},
	} {
		if a == other {
			t.Fatalf("%v == %v", a, other)
		}
	}
	var zero Limit
	if zero.Name() != "" || zero.Spec() != (Spec{}) || zero.validate() == nil || zero.Named("x").Name() != "x" {
		t.Fatalf("the zero Limit: %q %+v %v", zero.Name(), zero.Spec(), zero.validate())
	}
}

// TestUnusedDefinitionsGo: a definition no Limit holds leaves the table.
func TestUnusedDefinitionsGo(t *testing.T) {
	held := func() int {
		n := 0
		defs.Range(func(k, _ any) bool {
			if k.(limitDef).name == "transient" {
				n++
			}
			return true
		})
		return n
	}
	for i := range 100 {
		_ = FixedWindow(int64(i+1), time.Minute).Named("transient")
	}
	keep := FixedWindow(1, time.Minute).Named("transient")
	for deadline := time.Now().Add(10 * time.Second); held() > 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d definitions held, want 1", held())
		}
		runtime.GC()
	}
	if again := FixedWindow(1, time.Minute).Named("transient"); again != keep {
		t.Fatal("a held definition was replaced")
	}
	runtime.KeepAlive(keep)
}
