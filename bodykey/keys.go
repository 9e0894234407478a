package bodykey

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ratekit/ratekit"
)

// FormValue keys requests by a form field, trimmed and lower-cased ("Alice "
// and "alice" share one counter): the account of a login form. It takes the
// value http.Request.FormValue gives the handler, from the same sources in
// the same order (a url-encoded POST, PUT or PATCH body, the query string, a
// multipart body without its files), or from r.Form when it is parsed
// already, so the account counted is the account checked. A missing field
// is ratekit.ErrEmptyKey. With Exact, the value is kept as sent.
func FormValue(name string, opts ...Option) ratekit.KeyFunc {
	o := optionsOf(opts)
	return func(r *http.Request) (string, error) {
		v, err := formValue(r, name, o.max)
		if err != nil {
			return "", err
		}
		return o.key(v, "form", name)
	}
}

// JSONField keys requests by a top-level field, a string or a number, of a
// JSON object body, trimmed and lower-cased as FormValue does: the account
// of a JSON login. A body that is not a JSON object, or that lacks the
// field, is ratekit.ErrEmptyKey. With Exact, the value is kept as sent.
func JSONField(name string, opts ...Option) ratekit.KeyFunc {
	o := optionsOf(opts)
	return func(r *http.Request) (string, error) {
		body, err := readBody(r, o.max)
		if err != nil {
			return "", err
		}
		return o.key(jsonField(body, name), "JSON", name)
	}
}

// key returns v trimmed and lower-cased (as sent with Exact), or
// ErrEmptyKey naming the missing field of kind kind.
func (o options) key(v, kind, name string) (string, error) {
	if !o.exact {
		v = strings.ToLower(strings.TrimSpace(v))
	}
	if v == "" {
		return "", fmt.Errorf("%w: %s field %s is missing", ratekit.ErrEmptyKey, kind, name)
	}
	return v, nil
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
	var found any
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		var v any
		if err != nil || !ok || dec.Decode(&v) != nil {
			return ""
		}
		if strings.EqualFold(key, name) {
			found = v
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return ""
	}
	switch v := found.(type) {
	case string:
		return v
	case json.Number: // UseNumber: the number as written
		return v.String()
	}
	return ""
}
