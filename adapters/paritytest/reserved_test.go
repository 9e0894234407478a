package paritytest

import (
	"context"
	"strconv"
	"testing"

	"github.com/ratekit/ratekit"
)

// held is a response to a request that a handler held, when it comes.
type held chan result

// hold sends /conc/hold/<i> from client A and returns once its handler
// runs; the response comes on the channel once release[i] is closed.
func hold(t *testing.T, f *fixture, do client, i int) held {
	t.Helper()
	return holdAt(t, f, do, "/conc", i)
}

// holdAt is hold on the group at prefix.
func holdAt(t *testing.T, f *fixture, do client, prefix string, i int) held {
	t.Helper()
	out := make(held, 1)
	go func() { out <- do(t, request(step{path: prefix + "/hold/" + strconv.Itoa(i), xff: clientA})) }()
	if got := <-f.entered; got != strconv.Itoa(i) {
		t.Fatalf("handler %s entered, want %d", got, i)
	}
	return out
}

// TestReservedParity: on every framework, the same statuses, headers and
// bodies, and the same counts, for an InFlight(2) limit whose handlers are
// held open, for WithCountIf counting statuses below 500, and for a handler
// that settles its real cost (WithSettle, WithCost 100 as the estimate).
func TestReservedParity(t *testing.T) {
	const (
		policy   = `"conc";q=2;qu="concurrent-requests"`
		counted  = "X-Ratelimit-Remaining"
		inflight = "Ratelimit"
	)
	var want []result
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			f := newFixture(t)
			do := tg.build(f)
			var got []result
			expect := func(r result, status int, check map[string]string) {
				t.Helper()
				got = append(got, r)
				if r.status != status {
					t.Errorf("response %d: status %d, want %d; body %s", len(got), r.status, status, r.body)
				}
				for k, v := range check {
					if g := r.header.Get(k); g != v {
						t.Errorf("response %d: %s %q, want %q", len(got), k, g, v)
					}
				}
			}
			get := func(path string) result { return do(t, request(step{path: path, xff: clientA})) }

			// Two requests held open take both slots; the third is refused
			// with Retry-After 1 and no t; a slot is back once a handler returns.
			first, second := hold(t, f, do, 1), hold(t, f, do, 2)
			expect(get("/conc/x"), 429, map[string]string{"Retry-After": "1", inflight: `"conc";r=0`,
				"Ratelimit-Policy": policy, "X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "0"})
			close(f.release[1])
			expect(<-first, 200, map[string]string{inflight: `"conc";r=1`, "Ratelimit-Policy": policy, "Retry-After": ""})
			expect(get("/conc/x"), 200, map[string]string{inflight: `"conc";r=0`})
			close(f.release[2])
			expect(<-second, 200, map[string]string{inflight: `"conc";r=0`})
			expect(get("/conc/x"), 200, map[string]string{inflight: `"conc";r=1`})

			// WithCountIf: 502, 500 and 503 are refunded once answered.
			for _, s := range []struct {
				code int
				left string
			}{{200, "9"}, {502, "8"}, {404, "8"}, {500, "7"}, {201, "7"}, {503, "6"}, {200, "6"}} {
				expect(get("/counted/"+strconv.Itoa(s.code)), s.code, map[string]string{counted: s.left})
			}

			// WithSettle: each request is charged 100 and settled at used.
			for _, s := range []struct{ used, left string }{{"7", "900"}, {"130", "893"}, {"0", "763"}, {"100", "763"}} {
				expect(get("/tokens/x?used="+s.used), 200, map[string]string{counted: s.left})
			}

			key, err := ratekit.ByIP(trust...)(request(step{path: "/", xff: clientA}))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range []struct {
				limiter *ratekit.Limiter
				left    int64
			}{{f.conc, 2}, {f.counted, 10 - 4}, {f.tokens, 1000 - 237}} {
				if d, err := l.limiter.Peek(context.Background(), key); err != nil || d.Remaining != l.left {
					t.Errorf("%s: %d left, %v; want %d", d.Limit.Name(), d.Remaining, err, l.left)
				}
			}
			if n := f.errors.Load(); n != 0 {
				t.Errorf("%d errors reported, want 0", n)
			}
			if want == nil {
				want = got
				return
			}
			for i := range got {
				if d := diff(want[i], got[i]); d != "" {
					t.Errorf("response %d differs from %s:\n%s", i+1, targets[0].name, d)
				}
			}
		})
	}
}

// TestFailOpenInFlightParity: on every framework, requests of an InFlight(2)
// limit whose store fails pass (fail open) holding their places on the
// instance until their handlers return: with two held open, a third is
// refused as the store would refuse it (429, Retry-After 1, "conc";r=0),
// without a store call (two errors reported, not three); once a handler
// returns, the next request passes again.
func TestFailOpenInFlightParity(t *testing.T) {
	var want []result
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			f := newFixture(t)
			do := tg.build(f)
			get := func() result { return do(t, request(step{path: "/downslots/x", xff: clientA})) }
			first, second := holdAt(t, f, do, "/downslots", 1), holdAt(t, f, do, "/downslots", 2)
			got := []result{get()}
			if r := got[0]; r.status != 429 || r.header.Get("Retry-After") != "1" || r.header.Get("Ratelimit") != `"conc";r=0` {
				t.Errorf("a third request: %d %v, want 429, Retry-After 1, RateLimit \"conc\";r=0", r.status, r.header)
			}
			if n := f.errors.Load(); n != 2 {
				t.Errorf("%d errors reported with two requests held, want 2", n)
			}
			close(f.release[1])
			got = append(got, <-first, get())
			close(f.release[2])
			got = append(got, <-second)
			for i, r := range got[1:] {
				if r.status != 200 || r.header.Get("Ratelimit") != "" {
					t.Errorf("response %d: %d %v, want 200 without rate-limit headers (fail open)", i+2, r.status, r.header)
				}
			}
			if n := f.errors.Load(); n != 3 {
				t.Errorf("%d errors reported, want 3", n)
			}
			if want == nil {
				want = got
				return
			}
			for i := range got {
				if d := diff(want[i], got[i]); d != "" {
					t.Errorf("response %d differs from %s:\n%s", i+1, targets[0].name, d)
				}
			}
		})
	}
}
