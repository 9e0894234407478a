package ratekitgin

import (
	"fmt"
	"net/netip"

	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
)

// A GinKeyFunc names the subject a Gin request is counted against, like
// ratekit.KeyFunc but with the *gin.Context. An empty key or an error goes to
// the error policy; it never falls into one shared bucket.
type GinKeyFunc func(c *gin.Context) (string, error)

// ByClientIP keys requests by c.ClientIP(), grouped as ratekit.ByIP groups
// addresses (IPv6 by /64). It opts in to Gin's own client-IP resolution:
// use it only when the engine's trusted proxies are configured
// (engine.SetTrustedProxies or TrustedPlatform), because a default Gin engine
// trusts every proxy and reads X-Forwarded-For from any client. Prefer
// Middleware with ratekit.ByIP and ratekit.TrustProxies.
func ByClientIP() GinKeyFunc {
	ip, err := ratekit.NewClientIP()
	if err != nil { // unreachable: no options
		panic(err)
	}
	return func(c *gin.Context) (string, error) {
		s := c.ClientIP()
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "", fmt.Errorf("ratekit: gin client IP %q does not parse: %w", s, err)
		}
		return ip.Key(a.Unmap().WithZone("")), nil
	}
}
