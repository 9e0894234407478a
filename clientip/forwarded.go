package clientip

import (
	"net/netip"
	"slices"
	"strings"
)

// maxProxyHops is the most forwarding entries a TrustProxies walk reads:
// real chains are a few proxies long.
const maxProxyHops = 64

// walkHops returns the address n entries from the right; an invalid entry on
// the way stops at the address to its right. With fewer than n entries the
// request bypassed a proxy, so any entry may be the client's writing: the
// peer is the answer. It counts the n entries before it parses any.
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

func (c *Resolver) isTrusted(a netip.Addr) bool {
	return slices.ContainsFunc(c.trusted, func(p netip.Prefix) bool { return p.Contains(a) })
}

// An entryWalker yields the raw comma-separated entries of header lines
// right to left, from the end of the last line back. It neither splits a line
// nor allocates, so reading k entries costs the bytes of those k entries,
// whatever the size of the rest of the header.
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
	e := w.rest[i+1:]
	w.rest, w.inLine = w.rest[:max(i, 0)], i >= 0 // no comma: the line's first entry
	return e, true
}

// lastIndexByte is strings.LastIndexByte, which reads byte by byte, sped up
// for long strings: it looks for c in 1 KiB blocks from the end with the
// vectorized strings.IndexByte and reads backwards only in the block that
// holds the last c: BenchmarkClientIPHugeHeader/spaces/proxies, about
// 630 µs against 0.9 to 1.1 ms with strings.LastIndexByte.
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

// forwardedFor returns the unquoted value of the first ';'-separated pair of
// a Forwarded element whose trimmed name (before the pair's first '=') is
// "for" in any case, or "" when it has none. It reads the element once, left
// to right, without cutting it into pairs.
func forwardedFor(element string) string {
	start := 0 // the current pair's offset
	for i := 0; i < len(element); i++ {
		switch element[i] {
		case ';':
			start = i + 1
		case '=':
			// The name is "for": the three bytes before this '=' fold to it
			// and only spaces (so no earlier '=') precede them in the pair.
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

// parseAddr parses "ip", "ip:port", "[ipv6]" or "[ipv6]:port" as
// netip.ParseAddrPort or netip.ParseAddr would (also inside one pair of
// brackets), unmaps IPv4-mapped IPv6 and drops zones. Its cost does not grow
// with odd input: it reads s a few times and allocates at most
// netip.ParseAddr's small error value.
func parseAddr(s string) (netip.Addr, bool) {
	// Neither netip parser accepts "[x]", which parses as x does.
	for len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1]
	}
	a, ok := parseAddrPort(s)
	if !ok {
		a, ok = parseIP(s)
	}
	return a.Unmap(), ok
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

// parseAddrPort parses s as netip.ParseAddrPort does and returns the
// address without its zone. It checks the port in place: strconv's errors
// copy their input.
func parseAddrPort(s string) (netip.Addr, bool) {
	i := lastIndexByte(s, ':')
	if i < 1 || !validPort(s[i+1:]) {
		return netip.Addr{}, false
	}
	host, v6 := s[:i], false
	switch {
	case host[0] == '[':
		if len(host) < 2 || host[len(host)-1] != ']' {
			return netip.Addr{}, false
		}
		host, v6 = host[1:len(host)-1], true
	case strings.IndexByte(host, ':') >= 0: // IPv6 without brackets: refused unparsed
		return netip.Addr{}, false
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
