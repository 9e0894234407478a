package clientip_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/clientip"
)

// hugeHeader returns unit repeated to 1 MiB (the whole header is one line).
func hugeHeader(unit string) string {
	return strings.Repeat(unit, (1<<20)/len(unit))
}

// BenchmarkClientIPHugeHeader measures ByIP (resolve and key) on a 1 MiB
// forwarding header behind trusted proxies and behind two trusted hops: the
// work must depend on the hops walked, not on the header's size.
func BenchmarkClientIPHugeHeader(b *testing.B) {
	proxies := clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"))
	headers := []struct{ name, key, value string }{
		{"commas", "X-Forwarded-For", hugeHeader(",")},
		{"valid", "X-Forwarded-For", hugeHeader("198.51.100.9, ")[:(1<<20)/14*14-2]},
		{"trusted", "X-Forwarded-For", hugeHeader("10.0.0.2, ")[:(1<<20)/10*10-2]},
		{"spaces", "X-Forwarded-For", "198.51.100.9" + hugeHeader(" ")},
		{"zone", "X-Forwarded-For", "[fe80::1%" + hugeHeader("z") + "]:80"},
		{"badport", "X-Forwarded-For", "198.51.100.9:" + hugeHeader("9")},
		{"brackets", "X-Forwarded-For", hugeHeader("[")[:1<<19] + "198.51.100.9" + hugeHeader("]")[:1<<19]},
		{"forwarded-commas", "Forwarded", hugeHeader(",")},
		{"forwarded-pairs", "Forwarded", hugeHeader("a=;") + "for=198.51.100.9"},
		{"forwarded-trusted", "Forwarded", strings.TrimSuffix(hugeHeader(`for="[fd00::2]:80";proto=https, `), ", ")},
	}
	modes := []struct {
		name string
		opts []clientip.Option
	}{
		{"proxies", []clientip.Option{proxies}},
		{"hops2", []clientip.Option{clientip.TrustHops(2)}},
	}
	for _, h := range headers {
		for _, m := range modes {
			opts := m.opts
			if h.key == "Forwarded" {
				opts = append(opts[:len(opts):len(opts)], clientip.FromForwarded())
			}
			b.Run(h.name+"/"+m.name, func(b *testing.B) {
				benchByIP(b, ratekit.ByIP(opts...), http.Header{h.key: {h.value}})
			})
		}
	}
}

// BenchmarkClientIP measures ByIP on ordinary headers: a client behind two
// proxies, one header line or several.
func BenchmarkClientIP(b *testing.B) {
	proxies := clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"))
	cases := []struct {
		name   string
		opts   []clientip.Option
		header http.Header
	}{
		{"peer", nil, http.Header{"X-Forwarded-For": {"6.6.6.6, 198.51.100.9, 10.0.0.2"}}},
		{"xff/proxies", []clientip.Option{proxies}, http.Header{"X-Forwarded-For": {"6.6.6.6, 198.51.100.9, 10.0.0.2"}}},
		{"xff/hops2", []clientip.Option{clientip.TrustHops(2)}, http.Header{"X-Forwarded-For": {"6.6.6.6, 198.51.100.9, 10.0.0.2"}}},
		{"xff-lines/proxies", []clientip.Option{proxies}, http.Header{"X-Forwarded-For": {"6.6.6.6", "198.51.100.9:4711", "10.0.0.2"}}},
		{"xff-ipv6/proxies", []clientip.Option{proxies}, http.Header{"X-Forwarded-For": {"2001:db8::1, [2001:db8:1::9]:443, fd00::2"}}},
		{"forwarded/proxies", []clientip.Option{proxies, clientip.FromForwarded()},
			http.Header{"Forwarded": {`for=6.6.6.6, for="[2001:db8::9]:4711";proto=https, for=10.0.0.2;by=10.0.0.1`}}},
		{"forwarded/hops2", []clientip.Option{clientip.TrustHops(2), clientip.FromForwarded()},
			http.Header{"Forwarded": {`for=6.6.6.6, for="[2001:db8::9]:4711";proto=https, for=10.0.0.2;by=10.0.0.1`}}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) { benchByIP(b, ratekit.ByIP(tc.opts...), tc.header) })
	}
}

func benchByIP(b *testing.B, key ratekit.KeyFunc, h http.Header) {
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.1:80"
	r.Header = h
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := key(r); err != nil {
			b.Fatal(err)
		}
	}
}
