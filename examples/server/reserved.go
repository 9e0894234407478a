package main

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/ratekit/ratekit"
)

// maxHold is the longest GET /inflight holds its slot.
const maxHold = 10 * time.Second

// reservedRoutes are the routes whose requests hold a Reservation, per
// client IP: GET /inflight, at most quota requests in flight, and POST
// /generate, which reserves quota tokens of a budget of 10 × quota per
// window and settles the tokens it generated.
func reservedRoutes(c config) []route {
	q, w := c.quota, c.window
	return []route{
		{Path: "/inflight", Method: "GET", limits: []ratekit.Limit{ratekit.InFlight(q).Named("inflight")},
			note:   "; ?ms=N holds the slot N ms (at most 10000)",
			handle: func(*ratekit.Limiter, ratekit.KeyFunc) http.Handler { return http.HandlerFunc(hold) }},
		{Path: "/generate", Method: "POST", limits: []ratekit.Limit{ratekit.FixedWindow(10*q, w).Named("tokens")},
			note:   "; each request reserves " + strconv.FormatInt(q, 10) + " tokens, then settles ?tokens=N, the tokens generated",
			opts:   []ratekit.Option{ratekit.WithCost(q), ratekit.WithSettle()},
			handle: func(l *ratekit.Limiter, key ratekit.KeyFunc) http.Handler { return generate(l, key, q) }},
	}
}

// hold answers GET /inflight?ms=N after holding its in-flight slot N ms
// (0 to 10,000), or until the client goes away.
func hold(w http.ResponseWriter, r *http.Request) {
	ms, err := strconv.ParseInt(r.URL.Query().Get("ms"), 10, 64)
	if err != nil || ms < 0 || time.Duration(ms)*time.Millisecond > maxHold {
		badRequest(w, "ms must be a whole number of milliseconds from 0 to 10000")
		return
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done(): // the client went away, and its slot is free
		return
	}
	writeJSON(w, map[string]any{"route": "/inflight", "held_ms": ms, "remaining": w.Header().Get("X-RateLimit-Remaining")})
}

// generate answers POST /generate?tokens=N as a text generator would: the
// middleware reserved `reserve` tokens (the most a request may generate),
// and the handler settles the N it generated, so that the budget goes down
// by N. N above the reserve, or not a number, is 400 and costs nothing.
func generate(l *ratekit.Limiter, key ratekit.KeyFunc, reserve int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		n, err := strconv.ParseInt(r.URL.Query().Get("tokens"), 10, 64)
		bad := err != nil || n < 0 || n > reserve
		if bad {
			n = 0 // nothing generated: the whole reserve goes back
		}
		if err := ratekit.ReservationFrom(ctx).Settle(ctx, n); err != nil {
			slog.Warn("ratekit demo: settling /generate", "error", err)
		}
		if bad {
			badRequest(w, "tokens must be a whole number from 0 to "+strconv.FormatInt(reserve, 10)+", the tokens reserved per request")
			return
		}
		out := map[string]any{"route": "/generate", "reserved": reserve, "tokens": n}
		if k, err := key(r); err == nil {
			if d, err := l.Peek(ctx, k); err == nil {
				out["remaining"] = d.Remaining // after settling
			}
		}
		writeJSON(w, out)
	})
}

// badRequest answers 400 with a JSON body in the kit's shape.
func badRequest(w http.ResponseWriter, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	writeJSON(w, map[string]any{"status": 400, "code": "BAD_REQUEST", "message": message})
}
