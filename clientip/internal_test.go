package clientip

import (
	"strings"
	"testing"
)

// TestLastIndexByte compares lastIndexByte with strings.LastIndexByte around
// its block boundaries.
func TestLastIndexByte(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1023, 1024, 1025, 2047, 2048, 2049, 3000} {
		for _, at := range [][]int{nil, {0}, {n - 1}, {1}, {n - 1024}, {n - 1025}, {n - 1023}, {0, n - 1}, {5, n - 2000}, {n / 2}} {
			b := []byte(strings.Repeat("x", n))
			for _, i := range at {
				if i >= 0 && i < n {
					b[i] = ','
				}
			}
			if got, want := lastIndexByte(string(b), ','), strings.LastIndexByte(string(b), ','); got != want {
				t.Errorf("len %d, commas at %v: %d, want %d", n, at, got, want)
			}
		}
	}
}
