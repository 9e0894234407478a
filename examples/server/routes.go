package main

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/observe"
	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
)

// route is one limited route of the demo.
type route struct {
	Path   string `json:"path"`
	Method string `json:"method"`
	Limit  string `json:"limit"`
	limits []ratekit.Limit
	note   string                                                     // said after the limits
	opts   []ratekit.Option                                           // beyond the observers
	handle func(l *ratekit.Limiter, key ratekit.KeyFunc) http.Handler // nil: allowed(Path)
}

// newHandler builds the demo's routes over s.
func newHandler(s *demoStore, c config) (http.Handler, error) {
	q, w := c.quota, c.window
	routes := []route{
		{Path: "/fixed", Method: "GET", limits: []ratekit.Limit{ratekit.FixedWindow(q, w).Named("fixed")}},
		{Path: "/gcra", Method: "GET", limits: []ratekit.Limit{ratekit.GCRA(float64(q), w, q).Named("gcra")}},
		{Path: "/sliding", Method: "GET", limits: []ratekit.Limit{ratekit.SlidingWindow(q, w).Named("sliding")}},
		{Path: "/log", Method: "GET", limits: []ratekit.Limit{ratekit.SlidingLog(q, w).Named("log")}},
		{Path: "/token", Method: "GET", limits: []ratekit.Limit{ratekit.TokenBucket(float64(q), w, q).Named("token")}},
		{Path: "/leaky", Method: "GET", limits: []ratekit.Limit{ratekit.LeakyBucket(q, float64(q), w).Named("leaky")}},
		{Path: "/multi", Method: "GET", limits: []ratekit.Limit{ // at most half the quota at once, and the quota per window
			ratekit.TokenBucket(float64(q), w, max(q/2, 1)).Named("multi-burst"),
			ratekit.FixedWindow(q, w).Named("multi-window"),
		}},
		{Path: "/daily", Method: "GET", limits: []ratekit.Limit{ratekit.Calendar(q, calendar.Day, c.zone).Named("daily")}},
	}
	routes = append(routes, reservedRoutes(c)...)
	metrics, err := ratekitprom.New()
	if err != nil {
		return nil, err
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(metrics)
	observers := ratekit.WithObserver(metrics, observe.Log(slog.Default()))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	key := ratekit.ByIP()
	overridables := map[string]overridable{}
	for i := range routes {
		r := &routes[i]
		limiter, err := ratekit.New(s.limits, r.limits...)
		if err != nil {
			return nil, err
		}
		for _, l := range r.limits {
			overridables[l.Name()] = overridable{limiter, l}
		}
		r.Limit = describe(r.limits) + r.note
		h := allowed(r.Path)
		if r.handle != nil {
			h = r.handle(limiter, key)
		}
		mux.Handle(r.Method+" "+r.Path, ratekit.Middleware(limiter, key, append([]ratekit.Option{observers}, r.opts...)...)(h))
	}
	login, reset, loginLimits, err := loginRoutes(s.limits, c.login, c.deviceKey, metrics)
	if err != nil {
		return nil, err
	}
	mux.Handle("POST /login", login)
	mux.Handle("POST /password-reset", reset)
	verify, verifyLimits, err := newVerifier(s.limits, c.smsBudget, c.zone, metrics)
	if err != nil {
		return nil, err
	}
	mux.HandleFunc("POST /verify/send", verify.send)
	mux.HandleFunc("POST /verify/check", verify.check)
	adminRoutes(mux, c.adminToken, overridables)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"service": "ratekit demo", "store": s.where, "key": "client IP (socket peer)", "routes": routes, "metrics": "GET /metrics",
			"admin": "PUT|DELETE /admin/overrides/{limit}/{client IP}?quota=N[&expiry=10m], GET /admin/overrides (Authorization: Bearer <-admin-token>)",
			"login": map[string]any{
				"route":          "POST /login (form fields username, password; failures count; a success sets a trusted-device cookie (ratekit-device-…, one per account))",
				"password_reset": "POST /password-reset (form fields username, password: the right one; revokes every trusted device of the account)",
				"limits":         loginLimits, "demo_users": demoUsers},
			"verify": map[string]any{
				"send":   "POST /verify/send (form field destination; answers the 6-digit code, which a real service would send by SMS or email)",
				"check":  "POST /verify/check (form fields destination, code)",
				"limits": verifyLimits}})
	})
	return mux, nil
}

// describe lists the limits of a route.
func describe(limits []ratekit.Limit) string {
	s := ""
	for i, l := range limits {
		if i > 0 {
			s += "; "
		}
		s += l.String()
	}
	return s
}

// allowed answers a request that passed its limit.
func allowed(path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"route": path, "allowed": true, "remaining": w.Header().Get("X-RateLimit-Remaining")})
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
