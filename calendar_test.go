package ratekit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York, on machines without a zone database

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// sfParams parses a RateLimit or RateLimit-Policy field of one item,
// "name";k=v;..., into its name and integer parameters (RFC 8941), failing
// on anything else.
func sfParams(t *testing.T, field string) (string, map[string]int64) {
	t.Helper()
	parts := strings.Split(field, ";")
	name, err := strconv.Unquote(parts[0])
	if err != nil || strings.Contains(field, ",") {
		t.Fatalf("%q is not one string item", field)
	}
	params := map[string]int64{}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || n < 0 {
			t.Fatalf("%q: parameter %q is not a non-negative integer", field, p)
		}
		params[k] = n
	}
	return name, params
}

// A daily quota in New York tells the truth on the 23- and 25-hour days of
// 2026: w is the day's length, t, Retry-After, the body's retryAfter and
// X-RateLimit-Reset count to its end.
func TestCalendarHeaders(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at, end string
		w       int64
	}{
		{"2026-03-08T12:00:00Z", "2026-03-09T04:00:00Z", 23 * 3600},
		{"2026-11-01T12:00:00Z", "2026-11-02T05:00:00Z", 25 * 3600},
		{"2026-11-02T04:59:59.5Z", "2026-11-02T05:00:00Z", 25 * 3600},
	} {
		at, _ := time.Parse(time.RFC3339Nano, c.at)
		end, _ := time.Parse(time.RFC3339, c.end)
		clock := storetest.NewClock(at)
		ahead := func() time.Time { return clock.Now().Add(3 * time.Millisecond) } // the headers' clock, read after the store's
		l, err := ratekit.New(memstore.New(memstore.WithClock(clock.Now)), ratekit.Calendar(2, calendar.Day, ny).Named("daily"))
		if err != nil {
			t.Fatal(err)
		}
		h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithHeaderClock(ahead))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		left := end.Sub(at)
		secs := int64((left + time.Second - 1) / time.Second)
		for i := range 3 {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			_, policy := sfParams(t, rec.Header().Get("RateLimit-Policy"))
			name, rl := sfParams(t, rec.Header().Get("RateLimit"))
			reset, _ := strconv.ParseInt(rec.Header().Get("X-RateLimit-Reset"), 10, 64)
			if name != "daily" || policy["q"] != 2 || policy["w"] != c.w || rl["r"] != int64(max(1-i, 0)) || rl["t"] != secs || reset != end.Unix() {
				t.Fatalf("%s, request %d: %v; want q=2 w=%d r=%d t=%d, reset %d", c.at, i, rec.Header(), c.w, max(1-i, 0), secs, end.Unix())
			}
			if i < 2 {
				continue
			}
			var body struct {
				Context struct{ RetryAfter int64 } `json:"context"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != strconv.FormatInt(secs, 10) || body.Context.RetryAfter != secs {
				t.Fatalf("%s, past the quota: %d, Retry-After %q, body %s; want 429 and %d s", c.at, rec.Code, rec.Header().Get("Retry-After"), rec.Body, secs)
			}
		}
	}
}

// Bad calendar limits fail at New, saying how to fix them.
func TestCalendarInvalid(t *testing.T) {
	for _, c := range []struct {
		l    ratekit.Limit
		want string
	}{
		{ratekit.Calendar(10, calendar.Day, time.Local), `ratekit: invalid limit "calendar": location time.Local differs from machine to machine; name the zone with time.LoadLocation`},
		{ratekit.Calendar(10, "fortnight", nil), `ratekit: invalid limit "calendar": period must be calendar.Minute, Hour, Day, Week, Month, Year, WeekFrom(a weekday) or Every(a duration) (got "fortnight")`},
		{ratekit.Calendar(0, calendar.Day, nil), `ratekit: invalid limit "calendar": quota must be between 1 and 2^53-1 (got 0)`},
		{ratekit.Calendar(1, calendar.WeekFrom(9), nil), `ratekit: invalid limit "calendar": period must be calendar.Minute, Hour, Day, Week, Month, Year, WeekFrom(a weekday) or Every(a duration) (got "week-%!Weekday(9)")`},
		{ratekit.Calendar(1, calendar.Every(1500*time.Microsecond), nil), `ratekit: invalid limit "calendar": period must be a whole number of milliseconds (got 1.5ms)`},
	} {
		_, err := ratekit.New(memstore.New(), c.l)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %s", c.l, err, c.want)
		}
	}
	if s := ratekit.Calendar(5, calendar.Every(time.Minute), nil).Named("api").String(); s != "api: calendar 5 per 1m0s aligned to the clock" {
		t.Errorf("String: %s", s)
	}
	if a, b := ratekit.Calendar(5, calendar.Day, nil).Spec().ID, ratekit.Calendar(5, calendar.WeekFrom(time.Monday), nil).Spec().ID; a == b {
		t.Error("a day and a week share a key")
	}
}

// A quota per day in New York: it resets at midnight there.
func ExampleCalendar() {
	nyc, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	l, err := ratekit.New(memstore.New(), ratekit.Calendar(2, calendar.Day, nyc).Named("daily"))
	if err != nil {
		panic(err)
	}
	for range 3 {
		d, _ := l.Allow(context.Background(), "alice")
		fmt.Println(d.Allowed, d.Remaining)
	}
	// Output:
	// true 1
	// true 0
	// false 0
}
