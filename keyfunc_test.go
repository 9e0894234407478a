package ratekit_test

import (
	"errors"
	"net/http"
	"net/netip"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/clientip"
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

// TestByIPKeysAsKeyDoes: ByIP's key is ClientIP.Key of the resolved
// address, whatever form the peer and the headers take; a plain IPv4 peer
// costs no allocation (its key is RemoteAddr's own text).
func TestByIPKeysAsKeyDoes(t *testing.T) {
	for _, opts := range [][]clientip.Option{
		nil,
		{clientip.IPv4Prefix(24)},
		{clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))},
	} {
		c, err := clientip.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		key := ratekit.ByIP(opts...)
		for _, remote := range []string{
			"203.0.113.7:1234", "203.0.113.7", "[::ffff:203.0.113.7]:1234", "[2001:db8::1]:80", "10.1.2.3:80",
			"1.2.3.4:5", "1.2.3.45:5", "255.255.255.255:65535", "0.0.0.0:1",
		} {
			r, _ := http.NewRequest("GET", "/", nil)
			r.RemoteAddr = remote
			r.Header.Set("X-Forwarded-For", "198.51.100.9")
			a, err := c.Resolve(r.RemoteAddr, r.Header.Values)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := key(r); err != nil || got != c.Key(a) {
				t.Errorf("%v, peer %s: ByIP %q %v, Key %q", opts, remote, got, err, c.Key(a))
			}
		}
	}
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.7:1234"
	key := ratekit.ByIP()
	if n := testing.AllocsPerRun(100, func() { _, _ = key(r) }); n != 0 {
		t.Fatalf("ByIP of an IPv4 peer: %v allocations, want 0", n)
	}
}
