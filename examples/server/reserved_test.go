package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// TestDemoInFlight runs the demo on both stores with -quota 3: a bad ms is
// 400; three requests held open take every slot of the client, the fourth
// gets 429 with Retry-After 1; a slot is back as soon as a held request's
// client goes away.
func TestDemoInFlight(t *testing.T) {
	for _, store := range []string{"in-process", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			srv, st := demoOn(t, store == "redis", 3, time.Minute)
			get := func(ms string) *http.Response {
				res, err := http.Get(srv.URL + "/inflight?ms=" + ms)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res
			}
			for _, ms := range []string{"", "abc", "-1", "10001", "1.5"} {
				if res := get(ms); res.StatusCode != http.StatusBadRequest {
					t.Fatalf("ms=%q: %d, want 400", ms, res.StatusCode)
				}
			}
			start := time.Now()
			res, err := http.Get(srv.URL + "/inflight?ms=50")
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				HeldMS int64 `json:"held_ms"`
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 || body.HeldMS != 50 || time.Since(start) < 50*time.Millisecond {
				t.Fatalf("ms=50: %d %+v %v after %s", res.StatusCode, body, err, time.Since(start))
			}
			res.Body.Close()

			// A Limiter of the same limit on the same store sees the slots.
			slots, err := ratekit.New(st.limits, ratekit.InFlight(3).Named("inflight"))
			if err != nil {
				t.Fatal(err)
			}
			free := func(n int64) {
				t.Helper()
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
					d, err := slots.Peek(context.Background(), "127.0.0.1")
					if err == nil && d.Remaining == n {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("after 5 s: %d slots free, %v; want %d", d.Remaining, err, n)
					}
				}
			}
			var cancels []context.CancelFunc
			done := make(chan struct{}, 3)
			for range 3 {
				ctx, cancel := context.WithCancel(context.Background())
				cancels = append(cancels, cancel)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/inflight?ms=10000", nil)
				go func() {
					if res, err := http.DefaultClient.Do(req); err == nil {
						t.Errorf("a held request was answered %d before its client left", res.StatusCode)
						res.Body.Close()
					}
					done <- struct{}{}
				}()
			}
			defer func() {
				for _, cancel := range cancels {
					cancel()
				}
			}()
			free(0)
			res = get("0")
			want := map[string]string{"Retry-After": "1", "RateLimit": `"inflight";r=0`,
				"RateLimit-Policy": `"inflight";q=3;qu="concurrent-requests"`}
			if res.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("a 4th request in flight: %d, want 429", res.StatusCode)
			}
			for k, v := range want {
				if got := res.Header.Get(k); got != v {
					t.Errorf("the 4th request in flight: %s %q, want %q", k, got, v)
				}
			}
			cancels[0]()
			<-done
			free(1) // the client went away and the handler, which honours its context, returned: its slot is back
			if res := get("0"); res.StatusCode != 200 || res.Header.Get("RateLimit") != `"inflight";r=0` {
				t.Fatalf("with 2 held: %d, RateLimit %q; want 200, r=0", res.StatusCode, res.Header.Get("RateLimit"))
			}
			cancels[1]()
			cancels[2]()
			<-done
			<-done
			free(3)
			if res := get("0"); res.StatusCode != 200 || res.Header.Get("RateLimit") != `"inflight";r=2` {
				t.Fatalf("with none held: %d, RateLimit %q; want 200, r=2", res.StatusCode, res.Header.Get("RateLimit"))
			}
		})
	}
}

// TestDemoGenerate runs the demo on both stores with -quota 3: each POST
// /generate reserves 3 tokens of a budget of 30 and settles the tokens it
// generated; tokens above the reserve are 400 and cost nothing; the budget
// refuses a request once fewer than 3 tokens are left.
func TestDemoGenerate(t *testing.T) {
	for _, store := range []string{"in-process", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			srv := demo(t, store == "redis", 3, time.Minute)
			post := func(tokens string, code int, reservedLeft, left int64) {
				t.Helper()
				res, err := http.Post(srv.URL+"/generate?tokens="+tokens, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var body struct{ Tokens, Reserved, Remaining int64 }
				if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
					t.Fatal(err)
				}
				if res.StatusCode != code || (code == 200 && (body.Tokens != mustInt(tokens) || body.Reserved != 3 || body.Remaining != left)) {
					t.Fatalf("tokens=%s: %d %+v, want %d with %d tokens remaining", tokens, res.StatusCode, body, code, left)
				}
				if got := res.Header.Get("X-RateLimit-Remaining"); code != 400 && got != strconv.FormatInt(reservedLeft, 10) {
					t.Fatalf("tokens=%s: X-RateLimit-Remaining %s, want %d (the reserve taken)", tokens, got, reservedLeft)
				}
			}
			post("1", 200, 27, 29)
			post("3", 200, 26, 26)
			post("4", 400, 0, 0) // above the reserve
			post("x", 400, 0, 0)
			post("0", 200, 23, 26)
			for left := int64(23); left >= 2; left -= 3 {
				post("3", 200, left, left)
			}
			post("1", 429, 2, 0) // 2 left, 3 reserved per request
		})
	}
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
