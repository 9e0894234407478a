package ratekit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// DefaultMaxBody is the most of a request body that ByFormValue and
// ByJSONField read, 64 KiB: far more than a login form, far less than what
// a client could make the server hold. MaxBody changes it.
const DefaultMaxBody = 64 << 10

// ErrBodyTooLarge reports a request body larger than a key function may
// read (MaxBody). Middleware answers it 413 Payload Too Large under the
// default key error policy; the body is left as it came, unread past the
// bound.
var ErrBodyTooLarge = errors.New("ratekit: request body too large")

// A BodyOption configures a key function that reads the request body
// (ByFormValue, ByJSONField); build one with MaxBody.
type BodyOption interface{ apply(max *int64) }

// maxBodyOption is MaxBody's option.
type maxBodyOption int64

func (o maxBodyOption) apply(max *int64) { *max = int64(o) }

// MaxBody sets the most of a body a key function reads, in bytes (default
// DefaultMaxBody; at most math.MaxInt64-1). A larger body is
// ErrBodyTooLarge. MaxBody panics if n is not positive: it runs once, when
// the middleware is set up.
func MaxBody(n int64) BodyOption {
	if n <= 0 {
		panic(fmt.Sprintf("ratekit: MaxBody(%d): the bound must be a positive number of bytes, e.g. ratekit.MaxBody(64 << 10)", n))
	}
	return maxBodyOption(min(n, math.MaxInt64-1)) // max+1 bytes are read
}

// maxBody returns the bound set by opts.
func maxBody(opts []BodyOption) int64 {
	n := int64(DefaultMaxBody)
	for _, o := range opts {
		if o != nil {
			o.apply(&n)
		}
	}
	return n
}

// bufferedBody is a request body read by a key function and put back: the
// handler reads it as it came. buf is the whole body.
type bufferedBody struct {
	*bytes.Reader
	buf  []byte
	body io.Closer // the original body, closed with this one
}

func (b *bufferedBody) Close() error { return b.body.Close() }

// partBody is a body that was too large: the bytes read, then the rest.
type partBody struct {
	io.Reader
	io.Closer
}

// readBody reads r's body, at most max bytes, and puts it back so that the
// handler (and other key functions) read it as it came. A body above max is
// ErrBodyTooLarge, found from Content-Length without reading when the
// client declared it; otherwise after reading max+1 bytes, which are put
// back in front of the rest.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if b, ok := r.Body.(*bufferedBody); ok && b.Len() == len(b.buf) { // read by another key function
		if int64(len(b.buf)) > max {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, max)
		}
		return b.buf, nil
	}
	if r.ContentLength > max {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrBodyTooLarge, r.ContentLength, max)
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil || int64(len(buf)) > max {
		r.Body = partBody{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe): // an http.MaxBytesReader's bound, before ours
			return nil, fmt.Errorf("%w: %w", ErrBodyTooLarge, err)
		case err != nil:
			return nil, fmt.Errorf("ratekit: reading the request body: %w", err)
		}
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, max)
	}
	r.Body = &bufferedBody{Reader: bytes.NewReader(buf), buf: buf, body: r.Body}
	return buf, nil
}

// formValue returns the value of field name that http.Request.FormValue
// would return, in its order: a url-encoded body (POST, PUT and PATCH), the
// query string, then a multipart body (any method; files excepted). It
// reads at most max bytes of the body. A form parsed already (r.Form set,
// by ParseForm or by a framework) is read as it is. The value is a copy:
// it keeps no part of the body alive.
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
