package clientip_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/clientip"
)

func mustIP(t *testing.T, opts ...clientip.Option) *clientip.Resolver {
	t.Helper()
	c, err := clientip.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientIP(t *testing.T) {
	proxies := clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"))
	type hdr = map[string][]string
	cases := []struct {
		name   string
		opts   []clientip.Option
		peer   string
		header hdr
		want   string
	}{
		{"peer only by default", nil, "203.0.113.7:5000", hdr{"X-Forwarded-For": {"1.1.1.1"}}, "203.0.113.7"},
		{"untrusted peer's header ignored", []clientip.Option{proxies}, "203.0.113.7:5000", hdr{"X-Forwarded-For": {"1.1.1.1"}}, "203.0.113.7"},
		{"rightmost untrusted behind proxies", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"6.6.6.6, 198.51.100.9, 10.0.0.2"}}, "198.51.100.9"},
		{"several header lines", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"6.6.6.6, 198.51.100.9", "10.0.0.3"}}, "198.51.100.9"},
		{"junk stops at last trusted hop", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"1.1.1.1, junk, 10.0.0.2"}}, "10.0.0.2"},
		{"junk right at the peer", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"1.1.1.1, not-an-ip"}}, "10.0.0.1"},
		{"empty entry is junk", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"1.1.1.1,,"}}, "10.0.0.1"},
		{"all trusted: leftmost", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"10.9.9.9, 10.0.0.2"}}, "10.9.9.9"},
		{"no header behind proxy", []clientip.Option{proxies}, "10.0.0.1:80", nil, "10.0.0.1"},
		{"entry with port", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"198.51.100.9:4711"}}, "198.51.100.9"},
		{"bracketed IPv6 entry", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"[2001:db8::1]:443"}}, "2001:db8::/64"},
		{"mapped peer", nil, "[::ffff:1.2.3.4]:80", nil, "1.2.3.4"},
		{"mapped entry", []clientip.Option{proxies}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"::ffff:198.51.100.9"}}, "198.51.100.9"},
		{"mapped trusted peer", []clientip.Option{proxies}, "[::ffff:10.0.0.1]:80", hdr{"X-Forwarded-For": {"198.51.100.9"}}, "198.51.100.9"},
		{"zone dropped", nil, "[fe80::1%eth0]:80", nil, "fe80::/64"},
		{"IPv6 grouped by /64", nil, "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:80", nil, "2001:db8:1:2::/64"},
		{"IPv6 /128", []clientip.Option{clientip.IPv6Prefix(128)}, "[2001:db8::7]:80", nil, "2001:db8::7"},
		{"IPv4 /24", []clientip.Option{clientip.IPv4Prefix(24)}, "198.51.100.77:80", nil, "198.51.100.0/24"},
		{"hops 1", []clientip.Option{clientip.TrustHops(1)}, "192.0.2.1:80", hdr{"X-Forwarded-For": {"6.6.6.6, 198.51.100.9"}}, "198.51.100.9"},
		{"hops 2", []clientip.Option{clientip.TrustHops(2)}, "192.0.2.1:80", hdr{"X-Forwarded-For": {"6.6.6.6, 198.51.100.9, 192.0.2.5"}}, "198.51.100.9"},
		{"hops beyond entries", []clientip.Option{clientip.TrustHops(3)}, "192.0.2.1:80", hdr{"X-Forwarded-For": {"6.6.6.6, 198.51.100.9"}}, "192.0.2.1"},
		{"mapped trusted prefix", []clientip.Option{clientip.TrustProxies(netip.MustParsePrefix("::ffff:10.0.0.0/104"))}, "10.0.0.1:80", hdr{"X-Forwarded-For": {"198.51.100.9"}}, "198.51.100.9"},
		{"hops with junk", []clientip.Option{clientip.TrustHops(2)}, "192.0.2.1:80", hdr{"X-Forwarded-For": {"6.6.6.6, junk, 192.0.2.5"}}, "192.0.2.5"},
		{"forwarded", []clientip.Option{proxies, clientip.FromForwarded()}, "10.0.0.1:80",
			hdr{"Forwarded": {`for=6.6.6.6, for="[2001:db8::9]:4711";proto=https, for=10.0.0.2;by=10.0.0.1`}}, "2001:db8::/64"},
		{"forwarded obfuscated", []clientip.Option{proxies, clientip.FromForwarded()}, "10.0.0.1:80", hdr{"Forwarded": {"for=_hidden, for=10.0.0.2"}}, "10.0.0.2"},
		{"forwarded unknown", []clientip.Option{proxies, clientip.FromForwarded()}, "10.0.0.1:80", hdr{"Forwarded": {"for=unknown"}}, "10.0.0.1"},
		{"single header", []clientip.Option{proxies, clientip.FromHeader("cf-connecting-ip")}, "10.0.0.1:80", hdr{"Cf-Connecting-Ip": {"198.51.100.9"}}, "198.51.100.9"},
		{"single header untrusted peer", []clientip.Option{proxies, clientip.FromHeader("CF-Connecting-IP")}, "203.0.113.7:80", hdr{"Cf-Connecting-Ip": {"198.51.100.9"}}, "203.0.113.7"},
		{"single header repeated", []clientip.Option{proxies, clientip.FromHeader("CF-Connecting-IP")}, "10.0.0.1:80", hdr{"Cf-Connecting-Ip": {"1.1.1.1", "2.2.2.2"}}, "10.0.0.1"},
		{"single header junk", []clientip.Option{proxies, clientip.FromHeader("CF-Connecting-IP")}, "10.0.0.1:80", hdr{"Cf-Connecting-Ip": {"1.1.1.1, 2.2.2.2"}}, "10.0.0.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for k, vs := range tc.header {
				r.Header[k] = vs
			}
			got, err := ratekit.ByIP(tc.opts...)(r)
			if err != nil || got != tc.want {
				t.Fatalf("key = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestClientIPOptions(t *testing.T) {
	bad := [][]clientip.Option{
		{clientip.TrustHops(0)}, {clientip.IPv4Prefix(0)}, {clientip.IPv4Prefix(33)}, {clientip.IPv6Prefix(129)},
		{clientip.FromHeader("")}, {clientip.TrustProxies(netip.Prefix{})},
		{clientip.TrustHops(1), clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"))},
	}
	for i, opts := range bad {
		if _, err := clientip.New(opts...); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ByIP with a bad option did not panic")
		}
	}()
	ratekit.ByIP(clientip.TrustHops(-1))
}

func TestClientIPBadPeer(t *testing.T) {
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "@unix-socket"
	if _, err := ratekit.ByIP()(r); err == nil {
		t.Fatal("unparsable peer accepted")
	}
}

// FuzzClientIP: resolution never panics, always yields a valid address, and
// without trust it is the socket peer whatever the headers say.
func FuzzClientIP(f *testing.F) {
	f.Add("10.0.0.1:80", "1.1.1.1, 10.0.0.2", "for=1.1.1.1")
	f.Add("[::ffff:10.0.0.1]:1", "junk,,", `for="[::1]:80";by=x`)
	f.Add("[fe80::1%eth0]:80", "[2001:db8::1]:443, ::ffff:1.2.3.4", "for=unknown, for=_x")
	trusted := mustIPf(f, clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::/0")))
	forwarded := mustIPf(f, clientip.TrustProxies(netip.MustParsePrefix("0.0.0.0/0")), clientip.FromForwarded())
	plain := mustIPf(f)
	f.Fuzz(func(t *testing.T, peer, xff, fwd string) {
		h := http.Header{"X-Forwarded-For": {xff}, "Forwarded": {fwd}}
		p, perr := plain.Resolve(peer, h.Values)
		for _, c := range []*clientip.Resolver{trusted, forwarded} {
			a, err := c.Resolve(peer, h.Values)
			if (err == nil) != (perr == nil) {
				t.Fatalf("peer %q: error %v vs %v", peer, err, perr)
			}
			if err == nil && (!a.IsValid() || a.Zone() != "" || a.Is4In6()) {
				t.Fatalf("resolved %v", a)
			}
			_ = c.Key(a)
		}
		if perr == nil {
			if q, _ := plain.Resolve(peer, http.Header{}.Values); q != p {
				t.Fatalf("untrusted resolution read a header: %v vs %v", p, q)
			}
		}
	})
}

func mustIPf(f *testing.F, opts ...clientip.Option) *clientip.Resolver {
	c, err := clientip.New(opts...)
	if err != nil {
		f.Fatal(err)
	}
	return c
}
