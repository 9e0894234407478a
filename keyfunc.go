package ratekit

import (
	"fmt"
	"net/http"
	"strconv"
)

// A KeyFunc names the subject a request is counted against. Any
// func(*http.Request) (string, error) is a KeyFunc. An empty key or an error
// is handed to the middleware's error policy; it never falls into one shared
// bucket.
type KeyFunc func(r *http.Request) (string, error)

// ByIP keys requests by client IP address as resolved by a ClientIP built
// from opts (see NewClientIP): by default the socket peer, never a header.
// IPv6 addresses are grouped by /64. ByIP panics if opts are invalid, as
// regexp.MustCompile does: it runs once, when the middleware is set up.
func ByIP(opts ...IPOption) KeyFunc {
	c, err := NewClientIP(opts...)
	if err != nil {
		panic(err)
	}
	return c.KeyFunc()
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
		return JoinKey(parts...)
	}
}

// JoinKey joins key parts as Join does (each written as its length, ':' and
// the part), for adapters whose key functions are not net/http ones. An
// empty part, or no part, is ErrEmptyKey.
func JoinKey(parts ...string) (string, error) {
	var b []byte
	for _, part := range parts {
		if part == "" {
			return "", ErrEmptyKey
		}
		b = strconv.AppendInt(b, int64(len(part)), 10)
		b = append(b, ':')
		b = append(b, part...)
	}
	if len(b) == 0 {
		return "", ErrEmptyKey
	}
	return string(b), nil
}
