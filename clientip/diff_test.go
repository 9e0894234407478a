package clientip_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"testing"

	"github.com/ratekit/ratekit/clientip"
)

// The resolver once split every header line into a slice of all its entries
// and walked it from the right; it now reads entries lazily from the end.
// oldClientIP is that first algorithm, kept verbatim (but for the cap below)
// as the reference the lazy one must agree with on every input.
type oldClientIP struct {
	trusted []netip.Prefix
	hops    int
	source  string
	single  bool
	// limit, when not 0, is the TrustProxies cap on entries walked: the one
	// intended difference (an entry beyond it counts as one that does not
	// parse). 0 is the old, unbounded walk.
	limit int
}

func (c *oldClientIP) Resolve(remoteAddr string, header func(name string) []string) (netip.Addr, error) {
	peer, ok := oldParseAddr(remoteAddr)
	if !ok {
		return netip.Addr{}, fmt.Errorf("ratekit: client IP: peer address %q does not parse", remoteAddr)
	}
	if c.hops == 0 && !c.isTrusted(peer) {
		return peer, nil
	}
	if c.single {
		vals := header(c.source)
		if len(vals) == 1 {
			if a, ok := oldParseAddr(strings.TrimSpace(vals[0])); ok {
				return a, nil
			}
		}
		return peer, nil
	}
	entries := c.entries(header)
	if c.hops > 0 {
		return oldWalkHops(entries, peer, c.hops), nil
	}
	last := peer
	for i := len(entries) - 1; i >= 0; i-- {
		if c.limit > 0 && len(entries)-1-i == c.limit { // the cap (not in the old code)
			return last, nil
		}
		a, ok := oldParseAddr(entries[i])
		if !ok {
			return last, nil
		}
		if !c.isTrusted(a) {
			return a, nil
		}
		last = a
	}
	return last, nil
}

func oldWalkHops(entries []string, peer netip.Addr, n int) netip.Addr {
	if len(entries) < n {
		return peer
	}
	last := peer
	for i := len(entries) - 1; i >= 0 && i >= len(entries)-n; i-- {
		a, ok := oldParseAddr(entries[i])
		if !ok {
			return last
		}
		last = a
	}
	return last
}

func (c *oldClientIP) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (c *oldClientIP) entries(header func(string) []string) []string {
	var out []string
	for _, line := range header(c.source) {
		for _, e := range strings.Split(line, ",") {
			if c.source == "Forwarded" {
				e = oldForwardedFor(e)
			}
			out = append(out, strings.TrimSpace(e))
		}
	}
	return out
}

func oldForwardedFor(element string) string {
	for _, pair := range strings.Split(element, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(k, "for") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

func oldParseAddr(s string) (netip.Addr, bool) {
	if oldHasPort(s) {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			return ap.Addr().Unmap().WithZone(""), true
		}
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
				return oldParseAddr(s[1 : len(s)-1])
			}
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

func oldHasPort(s string) bool {
	return strings.Contains(s, "]:") || strings.Count(s, ":") == 1
}

// diffPair is one configuration built both ways.
type diffPair struct {
	name string
	new  *clientip.Resolver
	old  *oldClientIP
}

const proxyCap = 64 // the TrustProxies cap documented on TrustProxies

func diffPairs(tb testing.TB) []diffPair {
	tb.Helper()
	lan := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	all := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
	var out []diffPair
	add := func(name string, old oldClientIP, opts ...clientip.Option) {
		c, err := clientip.New(opts...)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, diffPair{name, c, &old})
	}
	for _, src := range []string{"X-Forwarded-For", "Forwarded"} {
		var from []clientip.Option
		if src == "Forwarded" {
			from = []clientip.Option{clientip.FromForwarded()}
		}
		add(src+"/lan", oldClientIP{trusted: lan, source: src, limit: proxyCap}, append([]clientip.Option{clientip.TrustProxies(lan...)}, from...)...)
		add(src+"/all", oldClientIP{trusted: all, source: src, limit: proxyCap}, append([]clientip.Option{clientip.TrustProxies(all...)}, from...)...)
		for _, n := range []int{1, 2, 3, 7} {
			add(fmt.Sprintf("%s/hops%d", src, n), oldClientIP{hops: n, source: src}, append([]clientip.Option{clientip.TrustHops(n)}, from...)...)
		}
	}
	add("single", oldClientIP{trusted: lan, source: "X-Forwarded-For", single: true},
		clientip.TrustProxies(lan...), clientip.FromHeader("X-Forwarded-For"))
	return out
}

// diffCheck resolves peer and lines (as the source header of each pair, and
// as both headers at once) both ways and fails on any difference in address,
// key or error.
func diffCheck(t testing.TB, pairs []diffPair, peer string, lines []string) {
	h := http.Header{"X-Forwarded-For": lines, "Forwarded": lines}
	for _, p := range pairs {
		got, gerr := p.new.Resolve(peer, h.Values)
		want, werr := p.old.Resolve(peer, h.Values)
		if (gerr == nil) != (werr == nil) || got != want || gerr == nil && p.new.Key(got) != p.new.Key(want) {
			t.Fatalf("%s: peer %q, lines %q:\nnew %v, %v\nold %v, %v", p.name, peer, lines, got, gerr, want, werr)
		}
	}
}

// diffTokens are the pieces random headers are made of: addresses in every
// form the parser knows and many it must refuse, separators, Forwarded
// syntax, spaces (ASCII and Unicode ones TrimSpace removes) and junk.
var diffTokens = []string{
	"1.2.3.4", "10.0.0.2", "10.9.9.9", "198.51.100.9", "203.0.113.7", "0.0.0.0", "255.255.255.255",
	"::ffff:10.1.2.3", "::ffff:198.51.100.9", "[::ffff:10.1.2.3]:80", "::ffff:1.2.3.4:80",
	"2001:db8::1", "[2001:db8::1]", "[2001:db8::1]:443", "fd00::2", "[fd00::3]:80", "::", "::1", "[::1]:80",
	"fe80::1%eth0", "[fe80::1%eth0]:80", "fe80::1%", "fd00::1%x]:80", "10.0.0.1%eth0", "%eth0", "[fe80::1%]:80",
	"1.2.3.4:80", "10.0.0.3:65535", "1.2.3.4:65536", "1.2.3.4:0080", "1.2.3.4:", ":80", "1.2.3.4:8a",
	"[1.2.3.4]:80", "[10.0.0.5]", "[[10.0.0.5]]", "[[[fd00::9]]]", "[]", "[", "]", "2001:db8::1:80",
	"01.2.3.4", "1.2.3", "1.2.3.4.5", "256.1.1.1", "12345::1", "g::1",
	"junk", "unknown", "_hidden", "", "", " ", "  ", "\t", "\u00a0", "\u0085", "\u3000",
	",", ",", ",", ", ", ",,", "\n", "\n", ";", ";", "=", ":", "%", `"`, `""`,
	"for=", "for=", "FOR=", "fOr=", "For =", " for=", "\u00a0for=", "\tfor=", "for= ", "xfor=", "ffor=", "fo=", "fxr=", "f\u00a0r=", "fr=", " or=", "xor=", "fox=",
	"proto=https", "by=10.0.0.1", "host=a=b",
	`for="[2001:db8::9]:4711"`, `for="10.0.0.9"`, `for="[fd00::8]"`, `for="_x"`, `for=""`, `for="`,
}

// diffLines turns gen into header lines: each byte picks a token, but byte
// 0xff repeats ", 10.0.0.7" forty times (two of them pass the proxy cap), and
// 0xfe and 0xfd write runs of spaces and digits longer than the 1 KiB blocks
// in which the resolver looks for separators.
func diffLines(gen []byte) []string {
	var b strings.Builder
	for _, g := range gen {
		switch g {
		case 0xff:
			b.WriteString(strings.Repeat(", 10.0.0.7", 40))
		case 0xfe:
			b.WriteString(strings.Repeat(" ", 1500))
		case 0xfd:
			b.WriteString(strings.Repeat("0", 2100))
		default:
			b.WriteString(diffTokens[int(g)%len(diffTokens)])
		}
	}
	if len(gen) == 0 {
		return nil
	}
	return strings.Split(b.String(), "\n")
}

var diffPeers = []string{"10.0.0.1:80", "[::ffff:10.0.0.1]:1", "[fd00::1]:443", "203.0.113.7:5000", "192.0.2.1", "[fe80::1%eth0]:80", "@unix"}

// FuzzClientIPDifferential compares the lazy resolver with the old one on
// fuzzed headers: raw (lines split at '\n') and built from tokens by gen,
// behind every peer of diffPeers and behind the fuzzed peer.
func FuzzClientIPDifferential(f *testing.F) {
	f.Add("10.0.0.1:80", "6.6.6.6, 198.51.100.9, 10.0.0.2\n10.0.0.3", []byte{0, 80, 1, 81, 40})
	f.Add("10.0.0.1:80", `for=6.6.6.6, for="[2001:db8::9]:4711";proto=https, for=10.0.0.2;by=10.0.0.1`, []byte{83, 93, 84, 73})
	f.Add("[::ffff:10.0.0.1]:1", "junk,,\n\n[[10.0.0.5]] , [fe80::1%eth0]:80", []byte{0xff, 0xff, 80, 3})
	f.Add("[fd00::1]:443", " FOR = 1.2.3.4 ; For=\"[fd00::2]\" ,for=10.0.0.2:99999", []byte{91, 90, 87, 92})
	f.Add("192.0.2.1", "1.2.3.4:0080,fd00::1%x]:80, \u00a010.0.0.2\u3000", []byte{})
	f.Add("10.0.0.1:80", "", []byte{1, 0xfe, 87, 0xfd, 0xfe, 44, 0xfd, 1})
	pairs := diffPairs(f)
	f.Fuzz(func(t *testing.T, peer, raw string, gen []byte) {
		for _, lines := range [][]string{strings.Split(raw, "\n"), diffLines(gen)} {
			diffCheck(t, pairs, peer, lines)
			for _, p := range diffPeers {
				diffCheck(t, pairs, p, lines)
			}
		}
	})
}

// TestClientIPDifferential runs the same comparison on pseudo-random headers
// with every run, from a fixed seed.
func TestClientIPDifferential(t *testing.T) {
	pairs := diffPairs(t)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	gen := make([]byte, 0, 64)
	for range n {
		gen = gen[:0]
		for range rng.IntN(40) {
			gen = append(gen, byte(rng.IntN(256)))
		}
		diffCheck(t, pairs, diffPeers[rng.IntN(len(diffPeers))], diffLines(gen))
	}
}

// TestClientIPProxyCap pins the one difference from the old walk: behind
// TrustProxies, at most 64 entries are read, and a 65th is treated as junk.
func TestClientIPProxyCap(t *testing.T) {
	c := mustIP(t, clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8")))
	trusted := func(n int) []string { // 10.0.0.n ... 10.0.0.1, rightmost first from the right
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("10.0.%d.%d", (n-i)/256, (n-i)%256)
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"64 trusted: leftmost", []string{strings.Join(trusted(64), ", ")}, "10.0.0.64"},
		{"client before 63 trusted", []string{"198.51.100.9, " + strings.Join(trusted(63), ", ")}, "198.51.100.9"},
		{"client before 64 trusted: cap", []string{"198.51.100.9, " + strings.Join(trusted(64), ", ")}, "10.0.0.64"},
		{"1000 trusted: cap", []string{strings.Join(trusted(1000), ",")}, "10.0.0.64"},
		{"cap across lines", append([]string{"198.51.100.9"}, trusted(64)...), "10.0.0.64"},
		{"junk at 65 is junk", []string{"junk, " + strings.Join(trusted(64), ", ")}, "10.0.0.64"},
	} {
		h := http.Header{"X-Forwarded-For": tc.lines}
		a, err := c.Resolve("10.0.0.1:80", h.Values)
		if err != nil || a.String() != tc.want {
			t.Errorf("%s: %v, %v; want %s", tc.name, a, err, tc.want)
		}
	}
}

// TestClientIPBoundedWork: on a 1 MiB header, resolution allocates only what
// the handful of entries it reads need, whatever the header holds (a few
// hundred bytes; the bound leaves room for race and coverage builds).
func TestClientIPBoundedWork(t *testing.T) {
	lan := clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"))
	mb := 1 << 20
	headers := map[string]string{
		"commas":           strings.Repeat(",", mb),
		"valid":            strings.Repeat("198.51.100.9,", mb/13),
		"trusted":          strings.Repeat("10.0.0.2,", mb/9) + "10.0.0.2",
		"spaces":           "1.2.3.4" + strings.Repeat(" ", mb),
		"brackets":         strings.Repeat("[", mb/2) + "10.0.0.2" + strings.Repeat("]", mb/2),
		"zone":             "[fe80::1%" + strings.Repeat("z", mb) + "]:80",
		"port":             "1.2.3.4:" + strings.Repeat("0", mb) + "80",
		"badport":          "1.2.3.4:" + strings.Repeat("9", mb),
		"forwarded-pairs":  strings.Repeat("a=;", mb/3) + "for=1.2.3.4",
		"forwarded-semis":  strings.Repeat(";", mb),
		"forwarded-quotes": `for="` + strings.Repeat(`"`, mb),
	}
	for name, v := range headers {
		for _, opts := range [][]clientip.Option{{lan}, {clientip.TrustHops(2)}, {lan, clientip.FromForwarded()}, {clientip.TrustHops(2), clientip.FromForwarded()}} {
			c := mustIP(t, opts...)
			h := http.Header{"X-Forwarded-For": {v}, "Forwarded": {v}}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 3 {
				if _, err := c.Resolve("10.0.0.1:80", h.Values); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			if b := (after.TotalAlloc - before.TotalAlloc) / 3; b > 16<<10 {
				t.Errorf("%s, %d options: %d bytes allocated per request", name, len(opts), b)
			}
		}
	}
}
