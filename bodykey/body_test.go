package bodykey_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/store/memstore"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func formRequest(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/login?username=fromquery", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

func TestFormValueKeepsTheBody(t *testing.T) {
	body := "username=+Alice+&password=secret"
	r := formRequest(body)
	k, err := bodykey.FormValue("username")(r)
	if err != nil || k != "alice" {
		t.Fatalf("key %q, %v; want alice", k, err)
	}
	if k, err := bodykey.FormValue("password")(r); err != nil || k != "secret" { // the body, read once
		t.Fatalf("second key %q, %v", k, err)
	}
	if got := r.PostFormValue("password"); got != "secret" {
		t.Fatalf("handler's PostFormValue: %q", got)
	}
	r = formRequest(body)
	_, _ = bodykey.FormValue("username")(r)
	if got, _ := io.ReadAll(r.Body); string(got) != body {
		t.Fatalf("handler read %q, want %q", got, body)
	}
}

func TestFormValueMultipart(t *testing.T) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	f, _ := mw.CreateFormFile("username", "evil.txt") // a file of the same name is not the field
	_, _ = f.Write([]byte("mallory"))
	_ = mw.WriteField("username", "Bob")
	_ = mw.Close()
	r := httptest.NewRequest(http.MethodPost, "/login", bytes.NewReader(buf.Bytes()))
	r.Header.Set("Content-Type", mw.FormDataContentType())
	if k, err := bodykey.FormValue("username")(r); err != nil || k != "bob" {
		t.Fatalf("key %q, %v; want bob", k, err)
	}
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		t.Fatalf("the handler cannot parse the body: %v", err)
	}
	if got := r.MultipartForm.File["username"]; len(got) != 1 || got[0].Filename != "evil.txt" {
		t.Fatalf("file part lost: %+v", got)
	}
}

func TestFormValueQueryAndMissing(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/login?username=Carol", nil)
	if k, err := bodykey.FormValue("username")(r); err != nil || k != "carol" {
		t.Fatalf("GET: key %q, %v", k, err)
	}
	r = formRequest("password=x") // the body lacks it: the query string is next, as FormValue orders them
	if k, err := bodykey.FormValue("username")(r); err != nil || k != "fromquery" {
		t.Fatalf("query fallback: key %q, %v", k, err)
	}
	r = httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("password=x"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, err := bodykey.FormValue("username")(r); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Fatalf("missing field: %v", err)
	}
}

// TestBodyBoundNotReadPast: a body above the bound is refused 413 without
// reading it when its length is declared, and after reading exactly one
// byte more than the bound when it is not.
func TestBodyBoundNotReadPast(t *testing.T) {
	l, err := ratekit.New(memstore.New(), ratekit.FixedWindow(100, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	h := ratekit.Middleware(l, bodykey.FormValue("username"))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }))
	const size = 10 << 20
	for _, declared := range []bool{true, false} {
		text := "username=a&pad=" + strings.Repeat("x", size)
		src := &countingReader{r: strings.NewReader(text)}
		r := httptest.NewRequest(http.MethodPost, "/login", src)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.ContentLength = -1 // chunked
		if declared {
			r.ContentLength = int64(len(text))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var body struct{ Code string }
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != http.StatusRequestEntityTooLarge || body.Code != "PAYLOAD_TOO_LARGE" || ran {
			t.Fatalf("declared %v: status %d, code %q, handler ran %v", declared, w.Code, body.Code, ran)
		}
		want := int64(0)
		if !declared {
			want = bodykey.DefaultMaxBytes + 1
		}
		if src.n != want {
			t.Fatalf("declared %v: read %d bytes, want %d", declared, src.n, want)
		}
	}
}

// TestBodyBoundFailOpen: under a fail-open key policy, a body above the
// bound reaches the handler whole.
func TestBodyBoundFailOpen(t *testing.T) {
	l, err := ratekit.New(memstore.New(), ratekit.FixedWindow(100, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	body := "username=a&pad=" + strings.Repeat("x", 200)
	var got []byte
	h := ratekit.Middleware(l, bodykey.FormValue("username", bodykey.MaxBytes(100)), ratekit.WithKeyErrorPolicy(ratekit.FailOpen))(
		http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) }))
	r := formRequest(body)
	r.ContentLength = -1
	h.ServeHTTP(httptest.NewRecorder(), r)
	if string(got) != body {
		t.Fatalf("handler read %d bytes, want the whole %d", len(got), len(body))
	}
}

func TestJSONField(t *testing.T) {
	cases := []struct {
		body, want string
		err        error
	}{
		{`{"username":" Dave ","password":"x"}`, "dave", nil},
		{`{"account":12345}`, "", ratekit.ErrEmptyKey},
		{`{"username":12345}`, "12345", nil},
		{`{"username":{"nested":"x"}}`, "", ratekit.ErrEmptyKey},
		{`{"username":null}`, "", ratekit.ErrEmptyKey},
		{`["username","x"]`, "", ratekit.ErrEmptyKey},
		{`not json`, "", ratekit.ErrEmptyKey},
		{``, "", ratekit.ErrEmptyKey},
		{`{"username":"` + strings.Repeat("a", 200) + `"}`, "", errTooLarge},
	}
	key := bodykey.JSONField("username", bodykey.MaxBytes(128))
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(c.body))
		k, err := key(r)
		if k != c.want || !is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%.40q: key %q, %v; want %q, %v", c.body, k, err, c.want, c.err)
		}
		if got, _ := io.ReadAll(r.Body); string(got) != c.body {
			t.Errorf("%.40q: the handler reads %.40q", c.body, got)
		}
	}
}

func TestMaxBodyInvalid(t *testing.T) {
	defer func() {
		if msg, _ := recover().(string); !strings.HasPrefix(msg, "ratekit: bodykey.MaxBytes(0)") {
			t.Fatalf("panic %q", msg)
		}
	}()
	bodykey.MaxBytes(0)
}

func TestFormValueParsedForm(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/login", nil)
	r.Form = map[string][]string{"username": {" Erin"}} // parsed already, by a framework or ParseForm
	if k, err := bodykey.FormValue("username")(r); err != nil || k != "erin" {
		t.Fatalf("key %q, %v", k, err)
	}
}

// TestFormValueOrder: FormValue reads the field FormValue would give the
// handler: a url-encoded body (POST, PUT, PATCH), then the query, then a
// multipart body; so the account counted is the account checked.
func TestFormValueOrder(t *testing.T) {
	multi := func(method, query, value string) *http.Request {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("user", value)
		_ = mw.Close()
		r := httptest.NewRequest(method, "/login"+query, bytes.NewReader(buf.Bytes()))
		r.Header.Set("Content-Type", mw.FormDataContentType())
		return r
	}
	form := func(method, query, body string) *http.Request {
		r := httptest.NewRequest(method, "/login"+query, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	}
	for _, r := range []*http.Request{
		multi("POST", "?user=victim", "random1"),
		multi("GET", "", "victim"),
		multi("GET", "?user=victim", "random"),
		form("DELETE", "?user=victim", "user=random"),
		form("POST", "?user=other", "user=victim"),
		form("PATCH", "", "user=victim"),
	} {
		key, err := bodykey.FormValue("user")(r)
		want := strings.ToLower(r.FormValue("user")) // what the handler sees
		if err != nil || key != want || want != "victim" {
			t.Errorf("%s %s: key %q (%v), handler's FormValue %q", r.Method, r.URL, key, err, want)
		}
	}
}

// TestJSONFieldAsDecoded: the key is the value a handler's struct decode
// gets: keys match without regard to case, the last one winning.
func TestJSONFieldAsDecoded(t *testing.T) {
	for _, body := range []string{`{"user":"random","USER":"victim"}`, `{"User":"victim"}`, `{"user":"x","pad":1,"uSeR":"victim"}`} {
		var decoded struct{ User string }
		_ = json.Unmarshal([]byte(body), &decoded)
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(body))
		if k, err := bodykey.JSONField("user")(r); err != nil || k != "victim" || decoded.User != "victim" {
			t.Errorf("%s: key %q (%v), decoded %q", body, k, err, decoded.User)
		}
	}
}

// TestMaxBodyLargest: the largest bound still reads the body.
func TestMaxBodyLargest(t *testing.T) {
	r := formRequest("username=dan")
	if k, err := bodykey.FormValue("username", bodykey.MaxBytes(math.MaxInt64))(r); err != nil || k != "dan" {
		t.Fatalf("key %q, %v", k, err)
	}
}

// TestUpstreamMaxBytesReader: a body an http.MaxBytesReader cut off before
// the key function's bound is too large as well (413).
func TestUpstreamMaxBytesReader(t *testing.T) {
	r := formRequest("username=erin&pad=" + strings.Repeat("x", 200))
	r.ContentLength = -1
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 50)
	if _, err := bodykey.FormValue("username")(r); !is(err, errTooLarge) {
		t.Fatalf("%v, want a *http.MaxBytesError", err)
	}
}

// errTooLarge stands for "an error matching *http.MaxBytesError" in is.
var errTooLarge = errors.New("body too large")

// is reports errors.Is(err, want), or for errTooLarge whether err matches
// *http.MaxBytesError, as response.KeyError checks.
func is(err, want error) bool {
	if want == errTooLarge {
		var mbe *http.MaxBytesError
		return errors.As(err, &mbe)
	}
	return errors.Is(err, want)
}

// TestExact: with Exact, a value is keyed as sent (case and spaces count);
// an empty one is still ErrEmptyKey.
func TestExact(t *testing.T) {
	form := bodykey.FormValue("password", bodykey.Exact())
	json := bodykey.JSONField("password", bodykey.Exact(), bodykey.MaxBytes(1<<10))
	for _, c := range []struct{ value, want string }{
		{"Summer2026!", "Summer2026!"},
		{"SUMMER2026!", "SUMMER2026!"},
		{" pass word ", " pass word "},
	} {
		k, err := form(formRequest("password=" + strings.ReplaceAll(c.value, " ", "+")))
		if err != nil || k != c.want {
			t.Fatalf("form %q: %q %v", c.value, k, err)
		}
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(`{"password":"`+c.value+`"}`))
		if k, err := json(r); err != nil || k != c.want {
			t.Fatalf("JSON %q: %q %v", c.value, k, err)
		}
	}
	if _, err := form(formRequest("password=")); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Fatalf("an empty password: %v, want ErrEmptyKey", err)
	}
	if k, _ := bodykey.FormValue("password")(formRequest("password=+Summer2026!")); k != "summer2026!" {
		t.Fatalf("without Exact: %q, want trimmed and lower-cased", k)
	}
}
