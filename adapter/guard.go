package adapter

import (
	"fmt"
	"net/netip"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/internal/keyjoin"
)

// NewGuard returns the ratekit.Guard of l under cfg's core options (the
// options an adapter forwards to ratekit). It panics if l is nil: that is a
// programming error found when the route is built.
func NewGuard[C any](l *ratekit.Limiter, cfg *Config[C]) *ratekit.Guard {
	return ratekit.NewGuard(l, cfg.coreOpts...)
}

// JoinKey joins key parts as ratekit.Join does (each written as its length,
// ':' and the part, so no choice of parts collides with another), for
// adapters whose key functions are not net/http ones. An empty part, or no
// part, is ratekit.ErrEmptyKey.
func JoinKey(parts ...string) (string, error) {
	k, err := keyjoin.Join(parts...)
	if err != nil {
		return "", ratekit.ErrEmptyKey
	}
	return k, nil
}

// Join joins key functions of a framework's context C as ratekit.Join does:
// an error or an empty part fails the whole key. Adapters offer it as their
// Join.
func Join[C any, K ~func(C) (string, error)](keys ...K) K {
	return func(c C) (string, error) {
		parts := make([]string, len(keys))
		for i, k := range keys {
			part, err := k(c)
			if err != nil {
				return "", err
			}
			parts[i] = part
		}
		return JoinKey(parts...)
	}
}

// FrameworkIP keys requests by the client address a framework resolved,
// ip(c), grouped as ratekit.ByIP groups addresses (IPv6 by /64); framework
// names it in errors. Adapters offer it as their ByFrameworkIP.
func FrameworkIP[C any, K ~func(C) (string, error)](framework string, ip func(c C) string) K {
	grouping, err := clientip.New()
	if err != nil { // unreachable: no options
		panic(err)
	}
	return func(c C) (string, error) {
		s := ip(c)
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "", fmt.Errorf("ratekit: %s client IP %q does not parse: %w", framework, s, err)
		}
		return grouping.Key(a.Unmap().WithZone("")), nil
	}
}
