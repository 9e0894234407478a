package wallclock

import (
	"testing"
	"time"
)

// TestUnixMicro: the wall clock agrees with time.Now.
func TestUnixMicro(t *testing.T) {
	for range 1000 {
		before := time.Now().UnixMicro()
		got := UnixMicro()
		after := time.Now().UnixMicro()
		if got < before-1 || got > after+1 { // clocks may round differently within a µs
			t.Fatalf("UnixMicro %d outside [%d, %d] (time.Now)", got, before, after)
		}
	}
}
