package ratekitecho

import (
	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/clientip"
)

// A KeyFunc names the subject an Echo request is counted against. An empty key
// or an error goes to the key error policy; it never falls into one shared
// bucket.
type KeyFunc func(c echo.Context) (string, error)

// FromHTTP adapts a net/http key function such as ratekit.ByHeader: it
// applies key to c.Request(). FromHTTP(nil) is nil.
func FromHTTP(key ratekit.KeyFunc) KeyFunc {
	if key == nil {
		return nil
	}
	return func(c echo.Context) (string, error) { return key(c.Request()) }
}

// ByIP keys requests by client IP address as ratekit.ByIP does, with its
// explicit trust model: the socket peer unless clientip.TrustProxies or
// clientip.TrustHops says which proxies to believe. It never calls
// c.RealIP. It panics if opts are invalid, when the route is built.
func ByIP(opts ...clientip.Option) KeyFunc { return FromHTTP(ratekit.ByIP(opts...)) }

// ByHeader keys requests by the first value of header name, e.g. an API key.
// A missing or empty header is ratekit.ErrEmptyKey.
func ByHeader(name string) KeyFunc { return FromHTTP(ratekit.ByHeader(name)) }

// Join keys requests by several key functions at once, as ratekit.Join does.
func Join(keys ...KeyFunc) KeyFunc { return adapter.Join(keys...) }

// ByFrameworkIP keys requests by c.RealIP(), grouped as ratekit.ByIP groups
// addresses (IPv6 by /64). It opts in to Echo's client-IP resolution: use it
// only when the Echo instance has an IPExtractor that trusts your proxies,
// because without one RealIP returns the leftmost X-Forwarded-For value,
// which any client can write. Prefer ByIP with clientip.TrustProxies.
func ByFrameworkIP() KeyFunc {
	return adapter.FrameworkIP[echo.Context, KeyFunc]("echo", func(c echo.Context) string { return c.RealIP() })
}
