package ratekit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
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
// (ByFormValue, ByJSONField). It is a plain value.
type BodyOption struct{ max int64 }

// MaxBody sets the most of a body a key function reads, in bytes (default
// DefaultMaxBody). A larger body is ErrBodyTooLarge. MaxBody panics if n is
// not positive: it runs once, when the middleware is set up.
func MaxBody(n int64) BodyOption {
	if n <= 0 {
		panic(fmt.Sprintf("ratekit: MaxBody(%d): the bound must be a positive number of bytes, e.g. ratekit.MaxBody(64 << 10)", n))
	}
	return BodyOption{max: n}
}

// maxBody returns the bound set by opts.
func maxBody(opts []BodyOption) int64 {
	n := int64(DefaultMaxBody)
	for _, o := range opts {
		if o.max > 0 {
			n = o.max
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
		if err != nil {
			return nil, fmt.Errorf("ratekit: reading the request body: %w", err)
		}
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, max)
	}
	r.Body = &bufferedBody{Reader: bytes.NewReader(buf), buf: buf, body: r.Body}
	return buf, nil
}

// formValue returns the first value of field name in r's form body
// (url-encoded or multipart, files excepted), read up to max bytes, or else
// in its query string, as http.Request.FormValue orders them. A form parsed
// already (r.Form set, by ParseForm or by a framework) is read as it is.
func formValue(r *http.Request, name string, max int64) (string, error) {
	if r.Form != nil {
		return r.Form.Get(name), nil
	}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if r.Method != http.MethodGet && r.Method != http.MethodHead &&
		(ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data") {
		body, err := readBody(r, max)
		if err != nil {
			return "", err
		}
		if v, ok := bodyField(body, ct, params["boundary"], name); ok {
			return v, nil
		}
	}
	return r.URL.Query().Get(name), nil
}

// bodyField finds field name in a form body of content type ct.
func bodyField(body []byte, ct, boundary, name string) (string, bool) {
	if ct == "application/x-www-form-urlencoded" {
		vals, _ := url.ParseQuery(string(body)) // what parsed, as FormValue keeps it
		v, ok := vals[name]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
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
