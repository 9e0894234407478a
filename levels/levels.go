package levels

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/reputation"
)

// guard is ratekit's request pipeline for one Limiter.
type guard = *ratekit.Guard

// DefaultThreshold is the reputation score a tenant needs to pass the gate
// while the global limit is exceeded.
const DefaultThreshold = 0.3

// GlobalSubject is the subject of the global limits: one counter for all
// traffic.
const GlobalSubject = "global"

// Endpoint holds a tenant's limits on one route.
type Endpoint struct {
	// Pattern is a net/http ServeMux pattern: "POST /login",
	// "GET /items/{id}", "/api/". A request takes the limits of the pattern
	// that ServeMux would choose, after cleaning its path.
	Pattern string
	// Limits apply per tenant on the route, beside Config.PerTenant.
	Limits []ratekit.Limit
}

// Config configures New: global, per-tenant and per-endpoint limits with a
// reputation gate. Store and Tenant are required, and at least one limit.
type Config struct {
	// Store keeps the limits' state (required).
	Store ratekit.Store
	// Tenant names the tenant a request belongs to (required).
	Tenant ratekit.KeyFunc
	// Global limits all traffic together, under GlobalSubject.
	Global []ratekit.Limit
	// PerTenant limits each tenant across every route.
	PerTenant []ratekit.Limit
	// Endpoints limit each tenant per route (method and path).
	Endpoints []Endpoint
	// Reputation, when set, keeps tenants' reputations and lets those of
	// at least Threshold through while the global limit is exceeded (New).
	Reputation reputation.Store
	// Policy is the reputation arithmetic (zero value:
	// reputation.DefaultPolicy()).
	Policy reputation.Policy
	// Threshold is the score that passes the gate, in (0, 1] (zero value:
	// DefaultThreshold, 0.3).
	Threshold float64
}

// New returns net/http middleware that applies, per request:
//
//  1. the global limits; when they deny, the reputation gate: a tenant with
//     a score of at least Threshold goes on, any other gets the global
//     limits' 429 (without Reputation, everyone does);
//  2. the tenant's limits: PerTenant and those of the matching endpoint, in
//     one store call; a denial is a 429 and records a violation;
//  3. an admitted request records a good request and reaches next.
//
// Store and reputation failures follow the error policies of opts (the
// options of ratekit.Middleware), and the timeout bounds all of a request's
// store calls together; a failed reputation update is only reported. An
// allowed request carries the tenant's rate-limit headers, not the global
// ones. New returns an error for an invalid configuration, including a global
// limit named like a tenant or endpoint one.
func New(cfg Config, opts ...ratekit.Option) (func(http.Handler) http.Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("ratekit: levels: the Store is nil; pass memstore.New() or a Redis store")
	}
	if cfg.Tenant == nil {
		return nil, errors.New("ratekit: levels: a Tenant key function is required, e.g. ratekit.ByHeader(\"X-Tenant\")")
	}
	lv := &levels{key: cfg.Tenant, rep: cfg.Reputation, policy: cmp.Or(cfg.Policy, reputation.DefaultPolicy()),
		threshold: cmp.Or(cfg.Threshold, DefaultThreshold), routes: http.NewServeMux(), endpoints: map[string]guard{}}
	if lv.rep != nil {
		if err := lv.policy.Validate(); err != nil {
			return nil, err
		}
		if !(lv.threshold > 0 && lv.threshold <= 1) {
			return nil, fmt.Errorf("ratekit: levels: threshold must be in (0, 1] (got %v)", lv.threshold)
		}
	}
	newGuard := func(limits []ratekit.Limit) (guard, error) {
		if len(limits) == 0 {
			return nil, nil
		}
		l, err := ratekit.New(cfg.Store, limits...)
		if err != nil {
			return nil, err
		}
		g := ratekit.NewGuard(l, opts...)
		if lv.any == nil {
			lv.any = g
		}
		return g, nil
	}
	var err error
	if lv.global, err = newGuard(cfg.Global); err != nil {
		return nil, err
	}
	if lv.endpoints[""], err = newGuard(cfg.PerTenant); err != nil {
		return nil, err
	}
	tenantLimits := slices.Clone(cfg.PerTenant) // and every endpoint's
	for _, e := range cfg.Endpoints {
		g, err := newGuard(slices.Concat(cfg.PerTenant, e.Limits))
		if err != nil {
			return nil, err
		}
		if g == nil {
			return nil, fmt.Errorf("ratekit: levels: endpoint %q has no limits", e.Pattern)
		}
		if err := handle(lv.routes, e.Pattern); err != nil {
			return nil, err
		}
		lv.endpoints[e.Pattern] = g
		tenantLimits = append(tenantLimits, e.Limits...)
	}
	for _, l := range cfg.Global {
		if slices.ContainsFunc(tenantLimits, func(t ratekit.Limit) bool { return t.Name() == l.Name() }) {
			return nil, &ratekit.LimitError{Limit: l.Name(), Field: "name", Reason: "is used by a global and a tenant limit; name them apart"}
		}
	}
	if lv.any == nil {
		return nil, fmt.Errorf("%w: levels without limits; set Global, PerTenant or Endpoints", ratekit.ErrInvalidLimit)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { lv.serve(next, w, r) })
	}, nil
}

// levels is the compiled Config.
type levels struct {
	any       guard // the first guard built, for what does not depend on limits
	key       ratekit.KeyFunc
	global    guard            // nil without global limits
	routes    *http.ServeMux   // Endpoints' patterns
	endpoints map[string]guard // by pattern; "": PerTenant alone, nil without them
	rep       reputation.Store
	policy    reputation.Policy
	threshold float64
}

// handle registers pattern, turning ServeMux's panic on a bad or duplicate
// pattern into an error.
func handle(mux *http.ServeMux, pattern string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("ratekit: levels: endpoint pattern %q: %v", pattern, p)
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return nil
}
