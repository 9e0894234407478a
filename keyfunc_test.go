package ratekit_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/ratekit/ratekit"
)

func TestJoinHasNoSeparatorCollisions(t *testing.T) {
	key := ratekit.Join(ratekit.ByHeader("A"), ratekit.ByHeader("B"))
	seen := map[string][2]string{}
	for _, p := range [][2]string{{"a:b", "c"}, {"a", "b:c"}, {"a:b:", "c"}, {"1:a", "b"}, {"1", ":ab"}, {"ab", "c"}, {"a", "bc"}} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("A", p[0])
		r.Header.Set("B", p[1])
		k, err := key(r)
		if err != nil {
			t.Fatal(err)
		}
		if q, dup := seen[k]; dup {
			t.Fatalf("%q and %q both give key %q", p, q, k)
		}
		seen[k] = p
	}
}

func TestEmptyKeys(t *testing.T) {
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("B", "x")
	for name, k := range map[string]ratekit.KeyFunc{
		"missing header":  ratekit.ByHeader("A"),
		"join with empty": ratekit.Join(ratekit.ByHeader("B"), func(*http.Request) (string, error) { return "", nil }),
		"empty join":      ratekit.Join(),
	} {
		if _, err := k(r); !errors.Is(err, ratekit.ErrEmptyKey) {
			t.Errorf("%s: %v, want ErrEmptyKey", name, err)
		}
	}
}
