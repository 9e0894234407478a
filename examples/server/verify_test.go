package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/internal/redistest"
)

// sendCode asks h for a code to dest from addr.
func sendCode(h http.Handler, addr, dest string) *httptest.ResponseRecorder {
	return form(h, "/verify/send", addr, url.Values{"destination": {dest}})
}

// checkCode checks code for dest through h from addr.
func checkCode(h http.Handler, addr, dest, code string) *httptest.ResponseRecorder {
	return form(h, "/verify/check", addr, url.Values{"destination": {dest}, "code": {code}})
}

// codeOf returns the code a send answered.
func codeOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Code, Demo string }
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &body) != nil || len(body.Code) != 6 || body.Demo == "" {
		t.Fatalf("send: %d %s, want 200 with a 6-digit code and the demo's note", rec.Code, rec.Body)
	}
	if _, err := strconv.Atoi(body.Code); err != nil {
		t.Fatalf("code %q is not digits", body.Code)
	}
	return body.Code
}

// otherThan returns a 6-digit code other than code.
func otherThan(code string) string {
	n, _ := strconv.Atoi(code)
	return fmt.Sprintf("%06d", (n+1)%1_000_000)
}

// remaining peeks at limit's remaining quota for key in the demo's store.
func remaining(t *testing.T, st *demoStore, limit ratekit.Limit, key string) int64 {
	t.Helper()
	l, err := ratekit.New(st.limits, limit)
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.Peek(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return d.Remaining
}

// retryAfter returns rec's Retry-After in seconds.
func retryAfter(rec *httptest.ResponseRecorder) int64 {
	n, _ := strconv.ParseInt(rec.Header().Get("Retry-After"), 10, 64)
	return n
}

// TestDemoVerifyAttempts: three wrong codes, then the right one is refused
// (429, Retry-After 600) and the code is dead; a new code has attempts of
// its own, and the right code verifies once.
func TestDemoVerifyAttempts(t *testing.T) {
	for _, store := range []string{"in-process", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			h, _ := handlerOf(t, store == "redis", config{quota: 3, window: time.Minute, prefix: redistest.Prefix(t), login: shortLogin})
			const addr, dest = "192.0.2.10:5000", "+15550100"
			code := codeOf(t, sendCode(h, addr, dest))
			for i := range 3 {
				if rec := checkCode(h, addr, dest, otherThan(code)); rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("wrong code %d: %d %s, want 422", i+1, rec.Code, rec.Body)
				}
			}
			if rec := checkCode(h, addr, dest, code); !refused(rec, "TOO_MANY_ATTEMPTS", "code", 600) {
				t.Fatalf("the right code after 3 wrong ones: %d %s, want 429 code, Retry-After 600", rec.Code, rec.Body)
			}
			if rec := checkCode(h, addr, dest, code); rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("the right code once refused: %d %s, want 422 (the code is dead)", rec.Code, rec.Body)
			}
			fresh := codeOf(t, sendCode(h, addr, dest))
			if rec := checkCode(h, addr, dest, otherThan(fresh)); rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("a wrong new code: %d, want 422", rec.Code)
			}
			if rec := checkCode(h, addr, dest, fresh); rec.Code != 200 {
				t.Fatalf("the new code, right at its 2nd attempt: %d %s, want 200", rec.Code, rec.Body)
			}
			if rec := checkCode(h, addr, dest, fresh); rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("the new code again: %d, want 422 (used up)", rec.Code)
			}
			if rec := checkCode(h, addr, "+15550199", "123456"); rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("a destination without a code: %d, want 422", rec.Code)
			}
		})
	}
}

// TestDemoVerifyPerDestination: a destination gets 3 codes per 15 minutes,
// from any address; a refused send counts against neither its address nor
// the day's budget.
func TestDemoVerifyPerDestination(t *testing.T) {
	for _, store := range []string{"in-process", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			h, st := handlerOf(t, store == "redis", config{quota: 3, window: time.Minute, prefix: redistest.Prefix(t), login: shortLogin})
			addr := func(i int) string { return fmt.Sprintf("198.51.100.%d:4000", i+1) }
			for i := range 3 {
				codeOf(t, sendCode(h, addr(i), "alice@example.com"))
			}
			for i, dest := range []string{"alice@example.com", " Alice@Example.COM "} {
				rec := sendCode(h, addr(3+i), dest)
				if !refused(rec, "RATE_LIMITED", "verify-destination", 0) || retryAfter(rec) < 899 || retryAfter(rec) > 900 {
					t.Fatalf("send %d to the destination, from a 4th address: %d %s, Retry-After %d; want 429 verify-destination, 900",
						4+i, rec.Code, rec.Body, retryAfter(rec))
				}
			}
			if n := remaining(t, st, verifyPerIP, "198.51.100.4"); n != 10 {
				t.Fatalf("the refused address has %d sends left, want 10 (a refused send counts nowhere)", n)
			}
			if n := remaining(t, st, ratekit.Calendar(1000, calendar.Day, nil).Named("sms-budget"), budgetKey); n != 997 {
				t.Fatalf("the budget has %d left, want 997", n)
			}
			codeOf(t, sendCode(h, addr(0), "bob@example.com"))
		})
	}
}

// TestDemoVerifyPerIP: an address gets 10 sends an hour, to any
// destinations; the refused send counts against neither its destination
// nor the budget.
func TestDemoVerifyPerIP(t *testing.T) {
	h, st := handlerOf(t, false, config{quota: 3, window: time.Minute, login: shortLogin})
	const addr = "203.0.113.7:4000"
	for i := range 10 {
		codeOf(t, sendCode(h, addr, fmt.Sprintf("+1555020%04d", i)))
	}
	rec := sendCode(h, addr, "+15550200010")
	if !refused(rec, "RATE_LIMITED", "verify-ip", 0) || retryAfter(rec) < 3599 || retryAfter(rec) > 3600 {
		t.Fatalf("the 11th send: %d %s, Retry-After %d; want 429 verify-ip, 3600", rec.Code, rec.Body, retryAfter(rec))
	}
	if n := remaining(t, st, verifyPerDestination, "+15550200010"); n != 3 {
		t.Fatalf("the refused destination has %d sends left, want 3", n)
	}
	if n := remaining(t, st, ratekit.Calendar(1000, calendar.Day, nil).Named("sms-budget"), budgetKey); n != 990 {
		t.Fatalf("the budget has %d left, want 990", n)
	}
	codeOf(t, sendCode(h, "203.0.113.8:4000", "+15550200010"))
}

// TestDemoVerifyBudget: two demo instances on one private redis-server with
// -sms-budget 5 share the day's budget exactly. Sends to distinct
// destinations from distinct addresses, alternating between the
// instances: 5 are sent, every later one is refused until the next UTC
// midnight and counts against neither its address nor its destination.
// Then, on a fresh budget, 30 sends at once through both: exactly 5 sent.
func TestDemoVerifyBudget(t *testing.T) {
	budget := ratekit.Calendar(5, calendar.Day, nil).Named("sms-budget")
	instances := func() ([2]http.Handler, *demoStore) {
		c := config{quota: 3, window: time.Minute, prefix: redistest.Prefix(t), login: shortLogin, smsBudget: 5}
		a, _ := handlerOf(t, true, c)
		b, st := handlerOf(t, true, c) // the same private redis-server, the same prefix
		return [2]http.Handler{a, b}, st
	}
	both, st := instances()
	for i := range 12 {
		addr, dest := fmt.Sprintf("198.51.100.%d:4000", i+1), fmt.Sprintf("+1555030%04d", i)
		rec := sendCode(both[i%2], addr, dest)
		if i < 5 {
			codeOf(t, rec)
			continue
		}
		now := time.Now().UTC()
		midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		want := int64(midnight.Sub(now)/time.Second) + 1
		if !refused(rec, "RATE_LIMITED", "sms-budget", 0) || retryAfter(rec) < want-1 || retryAfter(rec) > want {
			t.Fatalf("send %d, through instance %c: %d %s, Retry-After %d; want 429 sms-budget, about %d s (UTC midnight)",
				i+1, "AB"[i%2], rec.Code, rec.Body, retryAfter(rec), want)
		}
		if n := remaining(t, st, verifyPerIP, addr[:len(addr)-5]); n != 10 {
			t.Fatalf("refused send %d: its address has %d sends left, want 10", i+1, n)
		}
		if n := remaining(t, st, verifyPerDestination, dest); n != 3 {
			t.Fatalf("refused send %d: its destination has %d sends left, want 3", i+1, n)
		}
	}
	if n := remaining(t, st, budget, budgetKey); n != 0 {
		t.Fatalf("the budget has %d left, want 0", n)
	}

	both, _ = instances()
	codes := make([]int, 30)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = sendCode(both[i%2], fmt.Sprintf("203.0.113.%d:4000", i+1), fmt.Sprintf("+1555040%04d", i)).Code
		}()
	}
	wg.Wait()
	sent, refusals := 0, 0
	for _, c := range codes {
		switch c {
		case 200:
			sent++
		case 429:
			refusals++
		}
	}
	if sent != 5 || refusals != 25 {
		t.Fatalf("30 sends at once through two instances: %d sent, %d refused (%v); want 5 and 25", sent, refusals, codes)
	}
}
