package ratekitgrpc

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/adapter"
	"github.com/ratekit/ratekit/clientip"
)

// A KeyFunc names the subject a call is counted against, from the call's
// context. An empty key or an error goes to the key error policy
// (InvalidArgument by default); it never falls into one shared bucket.
type KeyFunc func(ctx context.Context) (string, error)

// ByIP keys calls by the client's IP address as ratekit.ByIP does, with its
// options and trust model: by default the peer's address, never metadata;
// with clientip.TrustProxies or clientip.TrustHops, every x-forwarded-for
// value, read right to left (clientip.FromForwarded and clientip.FromHeader
// read those fields instead). IPv6 addresses are grouped by /64. A peer
// that is not an IP address (a Unix socket) is a key error. ByIP panics if
// opts are invalid, when the server is built.
func ByIP(opts ...clientip.Option) KeyFunc {
	ip, err := clientip.New(opts...)
	if err != nil {
		panic(err)
	}
	return func(ctx context.Context) (string, error) {
		p, ok := peer.FromContext(ctx)
		if !ok || p.Addr == nil {
			return "", errNoPeer
		}
		var addr string
		if a, ok := p.Addr.(*net.TCPAddr); ok {
			addr = a.IP.String() // the bare IP: no port to format and parse again
		} else {
			addr = p.Addr.String() // which the resolver rejects
		}
		return ip.KeyOf(addr, func(name string) []string { return metadata.ValueFromIncomingContext(ctx, name) })
	}
}

var errNoPeer = fmt.Errorf("%w: the call has no peer address", ratekit.ErrEmptyKey)

// ByMetadata keys calls by the first value of metadata field name (e.g.
// "x-api-key"; names are case-insensitive), as ratekit.ByHeader does for
// HTTP. A missing or empty value is ratekit.ErrEmptyKey.
func ByMetadata(name string) KeyFunc {
	return func(ctx context.Context) (string, error) {
		if v := metadata.ValueFromIncomingContext(ctx, name); len(v) > 0 && v[0] != "" {
			return v[0], nil
		}
		return "", fmt.Errorf("%w: metadata %s is missing", ratekit.ErrEmptyKey, name)
	}
}

// ByMethod keys calls by their full method, "/package.Service/Method": one
// counter per method for all clients. Join it with ByIP for one counter per
// client and method.
func ByMethod() KeyFunc {
	return func(ctx context.Context) (string, error) {
		if m, ok := grpc.Method(ctx); ok && m != "" {
			return m, nil
		}
		return "", fmt.Errorf("%w: the call has no method", ratekit.ErrEmptyKey)
	}
}

var errNoCertificate = fmt.Errorf("%w: the call has no verified client certificate", ratekit.ErrEmptyKey)

// ByPeerCertificate keys calls by the identity of the client's verified TLS
// certificate (mutual TLS): its first URI name (a SPIFFE ID, for example),
// else its subject's distinguished name. A call without a verified
// certificate (plaintext, or a server that does not verify client
// certificates) is a key error.
func ByPeerCertificate() KeyFunc {
	return func(ctx context.Context) (string, error) {
		p, ok := peer.FromContext(ctx)
		if !ok {
			return "", errNoCertificate
		}
		info, ok := p.AuthInfo.(credentials.TLSInfo)
		if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
			return "", errNoCertificate
		}
		leaf := info.State.VerifiedChains[0][0]
		if len(leaf.URIs) > 0 {
			return leaf.URIs[0].String(), nil
		}
		if s := leaf.Subject.String(); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("%w: the client certificate names no URI and no subject", ratekit.ErrEmptyKey)
	}
}

// Join keys calls by several key functions at once, as ratekit.Join does:
// an error or an empty part fails the whole key.
func Join(keys ...KeyFunc) KeyFunc { return adapter.Join(keys...) }
