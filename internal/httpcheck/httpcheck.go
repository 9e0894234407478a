// Package httpcheck holds what the kit's HTTP tests share: a protected
// handler, a GET that returns the whole response, and a check that no
// internal error text reached a body.
package httpcheck

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// OK is the protected handler of the HTTP tests: 200 "handler".
var OK = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "handler")
})

// Response is what a test request got.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// Get sends GET url with header (name, value pairs) and reads the response.
func Get(t testing.TB, url string, header ...string) Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return Response{res.StatusCode, res.Header, string(b)}
}

// Leaks reports whether a response body shows internal error text.
func Leaks(r Response) bool {
	for _, s := range []string{"dial", "127.0.0.1", "10.1.2.3", "redis", "timeout", "refused", "secret", "ratekit:"} {
		if strings.Contains(strings.ToLower(r.Body), s) {
			return true
		}
	}
	return false
}
