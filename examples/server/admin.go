package main

import (
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/ratekit/ratekit"
)

// overridable is one limit of the demo's routes that the admin routes can
// override, and the Limiter that enforces it.
type overridable struct {
	limiter *ratekit.Limiter
	limit   ratekit.Limit
}

// adminRoutes adds the admin routes to mux, each refused without
// "Authorization: Bearer <token>" (401):
//
//	PUT    /admin/overrides/{limit}/{subject}?quota=N[&expiry=10m]  set an override
//	DELETE /admin/overrides/{limit}/{subject}                       clear it
//	GET    /admin/overrides                                         list every override
//
// {limit} is a limit's name (fixed, gcra, daily, ...), {subject} a client
// IP. An override keeps the limit's window and sets its quota (and, for a
// bucket, its rate) to N.
func adminRoutes(mux *http.ServeMux, token string, limits map[string]overridable) {
	guard := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			const prefix = "Bearer "
			got := r.Header.Get("Authorization")
			if len(got) <= len(prefix) || got[:len(prefix)] != prefix || subtle.ConstantTimeCompare([]byte(got[len(prefix):]), []byte(token)) != 1 {
				w.Header().Set("WWW-Authenticate", "Bearer")
				http.Error(w, "admin token required", http.StatusUnauthorized)
				return
			}
			h(w, r)
		}
	}
	target := func(w http.ResponseWriter, r *http.Request) (overridable, string, bool) {
		o, ok := limits[r.PathValue("limit")]
		if !ok {
			http.Error(w, "no limit named "+strconv.Quote(r.PathValue("limit")), http.StatusNotFound)
		}
		return o, r.PathValue("subject"), ok
	}
	mux.HandleFunc("PUT /admin/overrides/{limit}/{subject}", guard(func(w http.ResponseWriter, r *http.Request) {
		o, subject, ok := target(w, r)
		if !ok {
			return
		}
		in, expiry, err := overrideOf(o.limit, r)
		if err == nil {
			err = o.limiter.Override(r.Context(), subject, in, expiry)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]any{"subject": subject, "limit": in.String(), "expiry": expiry.String()})
	}))
	mux.HandleFunc("DELETE /admin/overrides/{limit}/{subject}", guard(func(w http.ResponseWriter, r *http.Request) {
		o, subject, ok := target(w, r)
		if !ok {
			return
		}
		if err := o.limiter.ClearOverride(r.Context(), subject, o.limit.Name()); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("GET /admin/overrides", guard(func(w http.ResponseWriter, r *http.Request) {
		type listed struct {
			Subject string `json:"subject"`
			Limit   string `json:"limit"`
			Quota   int64  `json:"quota"`
			Expires string `json:"expires,omitempty"`
		}
		out := []listed{}
		seen := map[*ratekit.Limiter]bool{}
		for _, o := range limits {
			if seen[o.limiter] {
				continue // a Limiter lists the overrides of all its limits
			}
			seen[o.limiter] = true
			all, err := o.limiter.Overrides(r.Context(), "")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			for _, v := range all {
				e := listed{Subject: v.Subject, Limit: v.Limit.String(), Quota: v.Limit.Spec().Quota}
				if !v.Expires.IsZero() {
					e.Expires = v.Expires.UTC().Format(time.RFC3339)
				}
				out = append(out, e)
			}
		}
		writeJSON(w, out)
	}))
}

// overrideOf returns the override of base a PUT asks for: its quota (and,
// for a bucket, its rate) from ?quota=, its expiry from ?expiry= (none: until
// cleared).
func overrideOf(base ratekit.Limit, r *http.Request) (ratekit.Limit, time.Duration, error) {
	q, err := strconv.ParseInt(r.URL.Query().Get("quota"), 10, 64)
	if err != nil {
		return ratekit.Limit{}, 0, errors.New("?quota= must be an integer")
	}
	var expiry time.Duration
	if e := r.URL.Query().Get("expiry"); e != "" {
		if expiry, err = time.ParseDuration(e); err != nil {
			return ratekit.Limit{}, 0, errors.New("?expiry= must be a duration such as 10m")
		}
	}
	sp := base.Spec()
	sp.Quota = q
	if sp.Rate > 0 {
		sp.Rate = float64(q)
	}
	in, err := base.With(sp)
	return in, expiry, err
}

// newToken returns a random admin token, for a demo started without one.
func newToken() string { return hex.EncodeToString(randomBytes(16)) }
