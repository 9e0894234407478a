package ratekitfiber

import (
	"fmt"
	"net"

	"github.com/gofiber/fiber/v2"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/clientip"
)

// ByIP keys requests by client IP address as ratekit.ByIP does, with its
// explicit trust model: the socket peer unless clientip.TrustProxies or
// clientip.TrustHops says which proxies to believe. It never calls c.IP. It
// panics if opts are invalid, when the app is built.
func ByIP(opts ...clientip.Option) KeyFunc {
	ip, err := clientip.New(opts...)
	if err != nil {
		panic(err)
	}
	return func(c *fiber.Ctx) (string, error) {
		return ip.KeyOf(peer(c), func(name string) []string { return headerValues(c, name) })
	}
}

// peer returns the socket peer's address: the bare IP of a TCP peer (no
// port to format and parse again), else the address as fasthttp prints it,
// which the client-IP resolver rejects rather than share one bucket.
func peer(c *fiber.Ctx) string {
	if a, ok := c.Context().RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.Context().RemoteAddr().String()
}

// headerValues returns every line of request header name, copied out of
// fasthttp's buffers.
func headerValues(c *fiber.Ctx, name string) []string {
	raw := c.Request().Header.PeekAll(name)
	out := make([]string, len(raw))
	for i, v := range raw {
		out[i] = string(v)
	}
	return out
}

// ByHeader keys requests by the first value of header name, e.g. an API key,
// as ratekit.ByHeader does. A missing or empty header is ratekit.ErrEmptyKey.
// The key aliases Fiber's buffers: it is valid while the handler runs, and
// Middleware copies it.
func ByHeader(name string) KeyFunc {
	return func(c *fiber.Ctx) (string, error) {
		v := c.Get(name)
		if v == "" {
			return "", fmt.Errorf("%w: header %s is missing", ratekit.ErrEmptyKey, name)
		}
		return v, nil
	}
}

// Join keys requests by several key functions at once, as ratekit.Join does.
func Join(keys ...KeyFunc) KeyFunc { return adapter.Join(keys...) }

// ByFrameworkIP keys requests by c.IP(), grouped as ratekit.ByIP groups
// addresses (IPv6 by /64). It opts in to Fiber's client-IP resolution, which
// is right only when the app's ProxyHeader names a single-address header that
// your proxy sets (X-Real-IP, CF-Connecting-IP) and EnableTrustedProxyCheck
// with TrustedProxies is on. With ProxyHeader X-Forwarded-For, c.IP returns
// the raw list (a request with several hops gets no key: 400) or, with
// EnableIPValidation, its leftmost address, which the client wrote. Prefer
// ByIP with clientip.TrustProxies, which reads X-Forwarded-For from the right.
func ByFrameworkIP() KeyFunc {
	return adapter.FrameworkIP[*fiber.Ctx, KeyFunc]("fiber", func(c *fiber.Ctx) string { return c.IP() })
}
