package ratekit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ratekit/ratekit/internal/keyjoin"
)

// A KeyFunc names the subject a request is counted against. Any
// func(*http.Request) (string, error) is a KeyFunc. An empty key or an error
// is handed to the middleware's key error policy; it never falls into one
// shared bucket. A KeyFunc is called by concurrent requests, so it must be
// safe for concurrent use; the ones in this package are. A nil KeyFunc is a
// programming error that Middleware reports when it is built.
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
	return func(r *http.Request) (string, error) {
		a, err := c.Resolve(r.RemoteAddr, r.Header.Values)
		if err != nil {
			return "", err
		}
		if k, ok := c.keyIn(r.RemoteAddr, a); ok { // the peer's own text
			return k, nil
		}
		return c.Key(a), nil
	}
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

// ByFormValue keys requests by a form field, trimmed and lower-cased so that
// "Alice " and "alice" share one counter: the account of a login form. It
// takes the value http.Request.FormValue gives the handler, in its order (a
// url-encoded body of a POST, PUT or PATCH, the query string, a multipart
// body; files excepted), so the account counted is the account checked; but
// it reads at most DefaultMaxBody bytes of the body (MaxBody changes it): a
// larger body is ErrBodyTooLarge, which Middleware answers 413 without
// reading further.
// The body is put back, so the handler reads it (or calls ParseForm) as it
// came. A form parsed already (r.Form) is read as it is. A missing field is
// ErrEmptyKey.
func ByFormValue(name string, opts ...BodyOption) KeyFunc {
	max := maxBody(opts)
	return func(r *http.Request) (string, error) {
		v, err := formValue(r, name, max)
		if err != nil {
			return "", err
		}
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "" {
			return "", fmt.Errorf("%w: form field %s is missing", ErrEmptyKey, name)
		}
		return v, nil
	}
}

// ByJSONField keys requests by a top-level field of a JSON object body, a
// string or a number, trimmed and lower-cased as ByFormValue does: the
// account of a JSON login. It reads at most DefaultMaxBody bytes (MaxBody
// changes it): a larger body is ErrBodyTooLarge, which Middleware answers
// 413 without reading further. The body is put back, so the handler decodes
// it as it came. A body that is not a JSON object, or that lacks the field,
// is ErrEmptyKey.
func ByJSONField(name string, opts ...BodyOption) KeyFunc {
	max := maxBody(opts)
	return func(r *http.Request) (string, error) {
		body, err := readBody(r, max)
		if err != nil {
			return "", err
		}
		v := strings.ToLower(strings.TrimSpace(jsonField(body, name)))
		if v == "" {
			return "", fmt.Errorf("%w: JSON field %s is missing", ErrEmptyKey, name)
		}
		return v, nil
	}
}

// jsonField returns the top-level field name of the JSON object body when it
// is a string or a number, or "". It matches keys as encoding/json fills a
// struct field: without regard to case, the last match winning, so that
// the key is the value the handler's decoder sees.
func jsonField(body []byte, name string) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	var found json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		var raw json.RawMessage
		if err != nil || !ok || dec.Decode(&raw) != nil {
			return ""
		}
		if strings.EqualFold(key, name) {
			found = raw
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return ""
	}
	var s string
	if json.Unmarshal(found, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(found, &n) == nil {
		return n.String()
	}
	return ""
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
