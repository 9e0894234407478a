package ratekit

import (
	"fmt"
	"net/http"

	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/internal/keyjoin"
)

// A KeyFunc names the subject a request is counted against. An empty key or
// an error is handed to the middleware's key error policy; it never falls
// into one shared bucket. A KeyFunc must be safe for concurrent use; the
// ones in this package are.
type KeyFunc func(r *http.Request) (string, error)

// ByIP keys requests by client IP address as resolved by a clientip.Resolver
// built from opts (see clientip.New): by default the socket peer, never a
// header. IPv6 addresses are grouped by /64. ByIP panics if opts are
// invalid, as regexp.MustCompile does.
func ByIP(opts ...clientip.Option) KeyFunc {
	c, err := clientip.New(opts...)
	if err != nil {
		panic(err)
	}
	return func(r *http.Request) (string, error) { return c.KeyOf(r.RemoteAddr, r.Header.Values) }
}

// ByHeader keys requests by the first value of header name, e.g. an API key.
// A missing or empty header is ErrEmptyKey.
func ByHeader(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := r.Header.Get(name)
		if v == "" {
			return "", fmt.Errorf("%w: header %s is missing", ErrEmptyKey, name)
		}
		return v, nil
	}
}

// Join keys requests by several key functions at once, e.g. an account and a
// client IP. Each part is written as its length, ':' and the part, so no
// choice of parts can collide with another ("a:b"+"c" differs from
// "a"+"b:c"). An error or an empty part fails the whole key.
func Join(keys ...KeyFunc) KeyFunc {
	return func(r *http.Request) (string, error) {
		parts := make([]string, len(keys))
		for i, k := range keys {
			part, err := k(r)
			if err != nil {
				return "", err
			}
			parts[i] = part
		}
		k, err := keyjoin.Join(parts...)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrEmptyKey, err)
		}
		return k, nil
	}
}
