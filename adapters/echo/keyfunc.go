package ratekitecho

import (
	"fmt"
	"net/netip"

	"github.com/labstack/echo/v4"

	"github.com/ratekit/ratekit"
)

// HTTPKey adapts a ratekit.KeyFunc to Echo: it applies key to c.Request().
// HTTPKey(nil) is nil.
func HTTPKey(key ratekit.KeyFunc) KeyFunc {
	if key == nil {
		return nil
	}
	return func(c echo.Context) (string, error) { return key(c.Request()) }
}

// ByRealIP keys requests by c.RealIP(), grouped as ratekit.ByIP groups
// addresses (IPv6 by /64). It opts in to Echo's client-IP resolution: use it
// only when the Echo instance has an IPExtractor that trusts your proxies,
// because without one RealIP returns the leftmost X-Forwarded-For value,
// which any client can write. Prefer Middleware with ratekit.ByIP and
// ratekit.TrustProxies.
func ByRealIP() KeyFunc {
	ip, err := ratekit.NewClientIP()
	if err != nil { // unreachable: no options
		panic(err)
	}
	return func(c echo.Context) (string, error) {
		s := c.RealIP()
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "", fmt.Errorf("ratekit: echo real IP %q does not parse: %w", s, err)
		}
		return ip.Key(a.Unmap().WithZone("")), nil
	}
}
