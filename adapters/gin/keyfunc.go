package ratekitgin

import (
	"github.com/gin-gonic/gin"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/clientip"
)

// A KeyFunc names the subject a Gin request is counted against. An empty key
// or an error goes to the key error policy; it never falls into one shared
// bucket.
type KeyFunc func(c *gin.Context) (string, error)

// FromHTTP adapts a net/http key function such as ratekit.ByHeader: it
// applies key to c.Request. FromHTTP(nil) is nil.
func FromHTTP(key ratekit.KeyFunc) KeyFunc {
	if key == nil {
		return nil
	}
	return func(c *gin.Context) (string, error) { return key(c.Request) }
}

// ByIP keys requests by client IP address as ratekit.ByIP does, with its
// explicit trust model: the socket peer unless clientip.TrustProxies or
// clientip.TrustHops says which proxies to believe. It never calls
// c.ClientIP. It panics if opts are invalid, when the route is built.
func ByIP(opts ...clientip.Option) KeyFunc { return FromHTTP(ratekit.ByIP(opts...)) }

// ByHeader keys requests by the first value of header name, e.g. an API key.
// A missing or empty header is ratekit.ErrEmptyKey.
func ByHeader(name string) KeyFunc { return FromHTTP(ratekit.ByHeader(name)) }

// Join keys requests by several key functions at once, as ratekit.Join does.
func Join(keys ...KeyFunc) KeyFunc { return adapter.Join(keys...) }

// ByFrameworkIP keys requests by c.ClientIP(), grouped as ratekit.ByIP
// groups addresses (IPv6 by /64). It opts in to Gin's own client-IP
// resolution: use it only when the engine's trusted proxies are configured
// (engine.SetTrustedProxies or TrustedPlatform), because a default Gin engine
// trusts every proxy and reads X-Forwarded-For from any client. Prefer ByIP
// with clientip.TrustProxies.
func ByFrameworkIP() KeyFunc {
	return adapter.FrameworkIP[*gin.Context, KeyFunc]("gin", func(c *gin.Context) string { return c.ClientIP() })
}
