package response_test

import (
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/ratekit/ratekit/response"
)

// A 429 body built from numbers, written as RFC 9457 problem+json.
func ExampleTooMany() {
	e := response.TooMany(response.CodeRateLimited, 1500*time.Millisecond, 100, 0, "api")
	rec := httptest.NewRecorder()
	e.Write(rec, response.Problem)
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("Content-Type"))
	fmt.Println(e.Message)
	// Output:
	// 429 2 application/problem+json
	// Too many requests. Try again in 2 seconds.
}

// The default body of a store failure under a fail-closed policy.
func ExampleUnavailable() {
	rec := httptest.NewRecorder()
	response.Unavailable(time.Second).ServeHTTP(rec, nil)
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("Cache-Control"))
	fmt.Println(rec.Body.String())
	// Output:
	// 503 1 no-store
	// {"status":503,"code":"SERVICE_UNAVAILABLE","message":"Service temporarily unavailable. Try again in 1 second.","context":{"retryAfter":1}}
}
