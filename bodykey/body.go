// Package bodykey has key functions that read the request body: the account
// of a login form (FormValue) or of a JSON login (JSONField). They read at
// most DefaultMaxBytes (MaxBytes changes it) and put the body back for the
// handler. A larger body is an error matching *http.MaxBytesError, which
// ratekit.Middleware answers 413 under the default key error policy.
package bodykey

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// DefaultMaxBytes is the most of a request body the key functions read: far
// more than a login form, far less than a client could make the server hold.
const DefaultMaxBytes = 64 << 10

// An Option configures a key function of this package (MaxBytes, Exact).
type Option interface{ apply(*options) }

// options are what Options set.
type options struct {
	max   int64 // the most of a body read
	exact bool  // the value as sent
}

// optionFunc is an Option.
type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// MaxBytes sets the most of a body a key function reads, in bytes (default
// DefaultMaxBytes; at most math.MaxInt64-1); the body is left unread past
// it. MaxBytes panics if n is not positive: it runs once, at setup.
func MaxBytes(n int64) Option {
	if n <= 0 {
		panic(fmt.Sprintf("ratekit: bodykey.MaxBytes(%d): the bound must be a positive number of bytes, e.g. bodykey.MaxBytes(64 << 10)", n))
	}
	return optionFunc(func(o *options) { o.max = min(n, math.MaxInt64-1) }) // max+1 bytes are read
}

// Exact keys by the value as sent, neither trimmed nor lower-cased: for a
// value whose every character counts, such as a password under
// lockout.KeyedHash. An empty value is still ratekit.ErrEmptyKey.
func Exact() Option { return optionFunc(func(o *options) { o.exact = true }) }

// tooLarge is the error of a body above max bytes.
func tooLarge(max int64) error {
	return fmt.Errorf("ratekit: request body larger than %d bytes: %w", max, &http.MaxBytesError{Limit: max})
}

// optionsOf returns what opts set.
func optionsOf(opts []Option) options {
	o := options{max: DefaultMaxBytes}
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	return o
}

// bufferedBody is a whole request body read by a key function and put back.
type bufferedBody struct {
	*bytes.Reader
	buf  []byte
	body io.Closer // the original body, closed with this one
}

func (b *bufferedBody) Close() error { return b.body.Close() }

// readBody reads at most max bytes of r's body and puts what it read back in
// front of the rest. A body above max is too large, known from
// Content-Length when the client declared it.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if b, ok := r.Body.(*bufferedBody); ok && b.Len() == len(b.buf) { // read by another key function
		if int64(len(b.buf)) > max {
			return nil, tooLarge(max)
		}
		return b.buf, nil
	}
	if r.ContentLength > max {
		return nil, tooLarge(max)
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil || int64(len(buf)) > max {
		r.Body = struct { // the bytes read, then the rest
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
		if err != nil { // an http.MaxBytesReader's bound, before ours, is a *http.MaxBytesError too
			return nil, fmt.Errorf("ratekit: reading the request body: %w", err)
		}
		return nil, tooLarge(max)
	}
	r.Body = &bufferedBody{Reader: bytes.NewReader(buf), buf: buf, body: r.Body}
	return buf, nil
}

// formValue returns field name as FormValue describes, as a copy that keeps
// no part of the body alive.
func formValue(r *http.Request, name string, max int64) (string, error) {
	if r.Form != nil {
		return r.Form.Get(name), nil
	}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" &&
		(r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch) {
		body, err := readBody(r, max)
		if err != nil {
			return "", err
		}
		vals, _ := url.ParseQuery(string(body)) // what parsed, as ParseForm keeps it
		if v, ok := vals[name]; ok && len(v) > 0 {
			return strings.Clone(v[0]), nil
		}
	}
	if v, ok := r.URL.Query()[name]; ok && len(v) > 0 {
		return v[0], nil
	}
	if ct == "multipart/form-data" {
		body, err := readBody(r, max)
		if err != nil {
			return "", err
		}
		if v, ok := multipartField(body, params["boundary"], name); ok {
			return v, nil
		}
	}
	return "", nil
}

// multipartField finds field name, not a file, in a multipart body.
func multipartField(body []byte, boundary, name string) (string, bool) {
	if boundary == "" {
		return "", false
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextPart()
		if err != nil {
			return "", false
		}
		if p.FormName() == name && p.FileName() == "" {
			v, err := io.ReadAll(p) // bounded by body
			return string(v), err == nil
		}
	}
}
