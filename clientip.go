package ratekit

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP resolves the client address of a request under an explicit trust
// model; ByIP is its usual form. Build it with NewClientIP (the zero value is
// not usable). By default it uses only the socket peer: headers are read only when
// the peer is a trusted proxy (TrustProxies) or a fixed number of proxies is
// trusted (TrustHops). Addresses are unmapped (::ffff:1.2.3.4 is 1.2.3.4),
// zones are dropped, and keys group IPv6 addresses by /64 (IPv6Prefix). It is
// safe for concurrent use.
type ClientIP struct {
	trusted []netip.Prefix
	hops    int
	source  string // header to read: X-Forwarded-For, Forwarded or a single-IP header
	single  bool   // source holds one address, not a list
	v4Bits  int
	v6Bits  int
}

// An IPOption configures a ClientIP (and ByIP). It is applied once, when the
// ClientIP is built; an invalid one is an error from NewClientIP.
type IPOption func(*ClientIP) error

// TrustProxies trusts peers inside prefixes: when the socket peer is one, the
// forwarding header is read right to left, skipping trusted addresses, and the
// first untrusted address is the client. An entry that does not parse stops
// the walk at the last address a trusted proxy vouched for; the leftmost
// (client-supplied) value is never used unless every hop is trusted. The walk
// reads at most 64 entries: a 65th entry, whatever it holds, is treated as
// one that does not parse, so the 64th address from the right is the client.
// The work per request is thus bounded by the hops walked, not by the size of
// the header.
func TrustProxies(prefixes ...netip.Prefix) IPOption {
	return func(c *ClientIP) error {
		for _, p := range prefixes {
			if !p.IsValid() {
				return fmt.Errorf("ratekit: TrustProxies: invalid prefix %v", p)
			}
			if p.Addr().Is4In6() && p.Bits() >= 96 { // peers are unmapped before matching
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			c.trusted = append(c.trusted, p.Masked())
		}
		return nil
	}
}

// TrustHops trusts exactly n proxies in front of the service: the client is
// the n-th forwarding entry from the right; with fewer entries, the peer. Prefer TrustProxies when the
// proxies' addresses are known: a hop count cannot tell a request that
// bypassed a proxy.
func TrustHops(n int) IPOption {
	return func(c *ClientIP) error {
		if n < 1 {
			return fmt.Errorf("ratekit: TrustHops: n must be at least 1 (got %d)", n)
		}
		c.hops = n
		return nil
	}
}

// FromForwarded reads the RFC 7239 Forwarded header (its for= parameters)
// instead of X-Forwarded-For.
func FromForwarded() IPOption {
	return func(c *ClientIP) error { c.source, c.single = "Forwarded", false; return nil }
}

// FromHeader reads one address from header name (e.g. CF-Connecting-IP,
// True-Client-IP) set by a trusted proxy. A missing, repeated or invalid
// value means the socket peer.
func FromHeader(name string) IPOption {
	return func(c *ClientIP) error {
		if name == "" {
			return errors.New("ratekit: FromHeader: empty header name")
		}
		c.source, c.single = http.CanonicalHeaderKey(name), true
		return nil
	}
}

// IPv4Prefix groups IPv4 clients by their first bits bits (default 32: one
// key per address).
func IPv4Prefix(bits int) IPOption {
	return prefixOption("IPv4Prefix", bits, 32, func(c *ClientIP) *int { return &c.v4Bits })
}

// IPv6Prefix groups IPv6 clients by their first bits bits (default 64: one
// key per subnet, since a single host usually holds a whole /64).
func IPv6Prefix(bits int) IPOption {
	return prefixOption("IPv6Prefix", bits, 128, func(c *ClientIP) *int { return &c.v6Bits })
}

func prefixOption(name string, bits, maxBits int, field func(*ClientIP) *int) IPOption {
	return func(c *ClientIP) error {
		if bits < 1 || bits > maxBits {
			return fmt.Errorf("ratekit: %s: bits must be 1..%d (got %d)", name, maxBits, bits)
		}
		*field(c) = bits
		return nil
	}
}

// NewClientIP returns a ClientIP configured by opts, or an error naming the
// invalid option.
func NewClientIP(opts ...IPOption) (*ClientIP, error) {
	c := &ClientIP{source: "X-Forwarded-For", v4Bits: 32, v6Bits: 64}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.hops > 0 && len(c.trusted) > 0 {
		return nil, errors.New("ratekit: TrustHops and TrustProxies exclude each other")
	}
	return c, nil
}

// Key returns the subject key for a: the address itself, or its network when
// a prefix groups addresses (e.g. "2001:db8:1:2::/64").
func (c *ClientIP) Key(a netip.Addr) string {
	bits := c.v6Bits
	if a.Is4() {
		bits = c.v4Bits
	}
	if bits == a.BitLen() {
		return a.String()
	}
	p, _ := a.Prefix(bits)
	return p.String()
}

// Resolve returns the client address of a request whose socket peer is
// remoteAddr ("ip:port" or "ip") and whose header values are read through
// header (http.Header.Values for net/http). Frameworks that are not net/http
// pass their own peer and header accessor.
func (c *ClientIP) Resolve(remoteAddr string, header func(name string) []string) (netip.Addr, error) {
	peer, ok := parseAddr(remoteAddr)
	if !ok {
		return netip.Addr{}, fmt.Errorf("ratekit: client IP: peer address %q does not parse", remoteAddr)
	}
	if c.hops == 0 && !c.isTrusted(peer) {
		return peer, nil
	}
	if c.single {
		vals := header(c.source)
		if len(vals) == 1 {
			if a, ok := parseAddr(strings.TrimSpace(vals[0])); ok {
				return a, nil
			}
		}
		return peer, nil
	}
	w := entryWalker{lines: header(c.source), forwarded: c.source == "Forwarded"}
	if c.hops > 0 {
		return walkHops(&w, peer, c.hops), nil
	}
	last := peer
	for n := 0; ; n++ {
		e, ok := w.next()
		if !ok {
			return last, nil
		}
		if n == maxProxyHops {
			return last, nil // as if e did not parse
		}
		a, ok := parseAddr(w.value(e))
		if !ok {
			return last, nil
		}
		if !c.isTrusted(a) {
			return a, nil
		}
		last = a
	}
}

// maxProxyHops is the most forwarding entries a TrustProxies walk reads (see
// TrustProxies): real chains are a few proxies long, and the cap bounds the
// work a header of trusted addresses can cause.
const maxProxyHops = 64

// walkHops returns the address n entries from the right: the first of them
// was appended by the proxy closest to the service. An invalid entry on the
// way stops at the address to its right. With fewer than n entries the
// request did not come through every proxy, and any entry may be the
// client's own writing: the peer is the answer. It reads at most n entries,
// counting them before it parses any.
func walkHops(w *entryWalker, peer netip.Addr, n int) netip.Addr {
	count := *w
	for range n {
		if _, ok := count.next(); !ok {
			return peer
		}
	}
	last := peer
	for range n {
		e, _ := w.next()
		a, ok := parseAddr(w.value(e))
		if !ok {
			return last
		}
		last = a
	}
	return last
}

func (c *ClientIP) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// An entryWalker yields the forwarding entries of header lines right to left,
// from the end of the last line back: line by line, and within a line from
// comma to comma (the raw text between commas, as strings.Split would cut
// it). It neither splits a line nor allocates, so reading k entries costs the
// bytes of those k entries, whatever the size of the rest of the header.
type entryWalker struct {
	lines     []string // lines not yet started
	rest      string   // unread part of the current line
	inLine    bool     // rest belongs to a line being read
	forwarded bool     // entries are Forwarded elements
}

// next returns the next raw entry to the left, or false when every line has
// been read. An empty line is one empty entry.
func (w *entryWalker) next() (string, bool) {
	if !w.inLine {
		if len(w.lines) == 0 {
			return "", false
		}
		w.rest, w.lines, w.inLine = w.lines[len(w.lines)-1], w.lines[:len(w.lines)-1], true
	}
	i := lastIndexByte(w.rest, ',')
	if i < 0 {
		e := w.rest
		w.rest, w.inLine = "", false
		return e, true
	}
	e := w.rest[i+1:]
	w.rest = w.rest[:i]
	return e, true
}

// lastIndexByte is strings.LastIndexByte, which reads byte by byte, sped up
// for long strings: it looks for c in 1 KiB blocks from the end with the
// vectorized strings.IndexByte and reads backwards only in the block that
// holds the last c.
func lastIndexByte(s string, c byte) int {
	const block = 1 << 10
	for end := len(s); end > 0; {
		start := max(end-block, 0)
		if strings.IndexByte(s[start:end], c) >= 0 {
			return start + strings.LastIndexByte(s[start:end], c)
		}
		end = start
	}
	return -1
}

// value returns the address text of raw entry e: e trimmed, or for a
// Forwarded element its for= value.
func (w *entryWalker) value(e string) string {
	if w.forwarded {
		e = forwardedFor(e)
	}
	return strings.TrimSpace(e)
}

// forwardedFor returns the for= value of one Forwarded element, unquoted, or
// "" when it has none: the value of the first of its ';'-separated pairs
// whose name, before the pair's first '=', is "for" in any case once the
// pair is trimmed. It reads the element once, left to right, up to that pair,
// without cutting it into pairs.
func forwardedFor(element string) string {
	start := 0 // the current pair's offset
	for i := 0; i < len(element); i++ {
		switch element[i] {
		case ';':
			start = i + 1
		case '=':
			// The name is the pair's text before its first '=' trimmed on
			// the left (trimming the pair never reaches past an '='), and
			// only ASCII letters fold to "for": the name is "for" if and
			// only if the three bytes before this '=' are and only spaces
			// precede them in the pair (so no earlier '=' either).
			if i-start >= 3 && element[i-3]|0x20 == 'f' && element[i-2]|0x20 == 'o' && element[i-1]|0x20 == 'r' &&
				strings.TrimSpace(element[start:i-3]) == "" {
				v := element[i+1:]
				if end := strings.IndexByte(v, ';'); end >= 0 {
					v = v[:end]
				}
				return strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
	}
	return ""
}

// parseAddr parses "ip", "ip:port", "[ipv6]" or "[ipv6]:port", unmaps
// IPv4-mapped IPv6 and drops zones. It accepts exactly what
// netip.ParseAddr, then netip.ParseAddrPort, then the same on the text inside
// one pair of brackets accept, but its cost does not grow with odd input: it
// reads s a few times and allocates at most netip.ParseAddr's small error
// value (ports are checked in place, zones are not interned, and nested
// brackets are peeled in one pass).
func parseAddr(s string) (netip.Addr, bool) {
	// Neither netip parser accepts text that starts with '[' and ends with
	// ']' (a port cannot end in ']', an address cannot start with '['), so
	// "[x]" parses as x does: peel nested pairs in one pass, not one call
	// (and one scan of s) per pair.
	for len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1]
	}
	// At most one of the two forms parses: try the likelier one first.
	if hasPort(s) { // RemoteAddr's usual form
		if a, ok := parseAddrPort(s); ok {
			return a.Unmap(), true
		}
		if a, ok := parseIP(s); ok {
			return a.Unmap(), true
		}
		return netip.Addr{}, false
	}
	if a, ok := parseIP(s); ok {
		return a.Unmap(), true
	}
	if a, ok := parseAddrPort(s); ok {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// parseIP parses s as netip.ParseAddr does and returns the address without
// its zone. A zone (after the first '%') only has to be non-empty and follow
// an IPv6 address, so it is checked, not parsed: netip would intern it.
func parseIP(s string) (netip.Addr, bool) {
	zone := strings.IndexByte(s, '%')
	if zone >= 0 {
		if zone == len(s)-1 {
			return netip.Addr{}, false
		}
		s = s[:zone]
	}
	a, err := netip.ParseAddr(s)
	if err != nil || zone >= 0 && !a.Is6() {
		return netip.Addr{}, false
	}
	return a, true
}

// parseAddrPort parses s as netip.ParseAddrPort does ("ip:port" or
// "[ipv6]:port", split at the last colon) and returns the address without
// its zone. It checks the port in place rather than through strconv, whose
// errors copy their input.
func parseAddrPort(s string) (netip.Addr, bool) {
	i := lastIndexByte(s, ':')
	if i < 1 || !validPort(s[i+1:]) {
		return netip.Addr{}, false
	}
	host, v6 := s[:i], false
	if host[0] == '[' {
		if len(host) < 2 || host[len(host)-1] != ']' {
			return netip.Addr{}, false
		}
		host, v6 = host[1:len(host)-1], true
	}
	a, ok := parseIP(host)
	if !ok || a.Is4() == v6 { // brackets if and only if IPv6
		return netip.Addr{}, false
	}
	return a, true
}

// validPort reports whether strconv.ParseUint(p, 10, 16) accepts p: decimal
// digits (leading zeros allowed) with a value below 65536.
func validPort(p string) bool {
	if p == "" {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return false
		}
		if n = n*10 + int(c-'0'); n > 0xffff {
			return false
		}
	}
	return true
}

// hasPort reports whether s looks like "ip:port" or "[ipv6]:port".
func hasPort(s string) bool {
	return strings.Contains(s, "]:") || strings.Count(s, ":") == 1
}
