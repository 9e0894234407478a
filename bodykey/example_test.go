package bodykey_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/store/memstore"
)

// Key a JSON login by its username: the body is read up to 1 KiB here
// (64 KiB by default) and put back for the handler, and a larger one is
// refused with 413 before any limit or handler runs.
func ExampleJSONField() {
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(5, time.Minute).Named("login"))
	if err != nil {
		panic(err)
	}
	login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Username, Password string }
		_ = json.NewDecoder(r.Body).Decode(&body) // the whole body, as the client sent it
		fmt.Fprintf(w, "hello %s", body.Username)
	})
	handler := ratekit.Middleware(limiter, bodykey.JSONField("username", bodykey.MaxBytes(1<<10)))(login)

	for _, body := range []string{
		`{"username":"Alice","password":"wonderland"}`,
		`{"password":"no username"}`,
		`{"username":"bob","pad":"` + strings.Repeat("x", 2<<10) + `"}`,
	} {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest("POST", "/login", strings.NewReader(body)))
		fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	// Output:
	// 200 hello Alice
	// 400 {"status":400,"code":"BAD_REQUEST","message":"The request lacks what this service counts requests by.","context":{}}
	// 413 {"status":413,"code":"PAYLOAD_TOO_LARGE","message":"The request body is larger than this service reads.","context":{}}
}
