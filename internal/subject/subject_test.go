package subject

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// TestRawAndDigestApart: a subject equal to another's digest is held apart
// from it, and short subjects are held as they are.
func TestRawAndDigestApart(t *testing.T) {
	long := strings.Repeat("k", 80)
	sum := sha256.Sum256([]byte(long))
	for _, other := range []string{string(sum[:]), Key(long)[:MaxRaw], Key(long), long[:MaxRaw]} {
		if Key(other) == Key(long) {
			t.Fatalf("subject %q is held as the long subject's digest", other)
		}
	}
	for _, n := range []int{0, 1, 32, MaxRaw} {
		if k := strings.Repeat("x", n); Key(k) != k {
			t.Fatalf("a %d-byte subject is not kept as it is", n)
		}
	}
}
