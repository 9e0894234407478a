package plans

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/bounds"
)

// A Plans holds one Limiter per plan over one store. It is safe for
// concurrent use and immutable once built by New; the zero Plans has no
// plans.
type Plans struct {
	limiters map[string]*ratekit.Limiter
}

// ErrUnknownPlan is the error of a request whose plan is not one of the
// Plans': a key error, so by default it gets a 400 (ratekit.WithKeyErrorPolicy).
var ErrUnknownPlan = errors.New("ratekit: plans: unknown plan")

// New builds a Limiter for every plan of plans (name to limits) on store;
// plan names follow the rules of limit names. Every problem of every plan is
// reported at once. Name each plan's limits (Limit.Named): clients see the
// names, and limits of two plans with the same name and parameters share
// their counters (a service-wide daily cap, say).
func New(store ratekit.Store, plans map[string][]ratekit.Limit) (*Plans, error) {
	if len(plans) == 0 {
		return nil, errors.New("ratekit: plans: no plans; give at least one, e.g. {\"free\": {ratekit.FixedWindow(100, time.Minute).Named(\"free\")}}")
	}
	p := &Plans{limiters: make(map[string]*ratekit.Limiter, len(plans))}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(plans)) {
		if why := bounds.Name(name); why != "" {
			errs = append(errs, fmt.Errorf("ratekit: plans: plan name %q %s", name, why))
			continue
		}
		l, err := ratekit.New(store, plans[name]...)
		if err != nil {
			errs = append(errs, fmt.Errorf("ratekit: plans: plan %q: %w", name, err))
			continue
		}
		p.limiters[name] = l
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Limiter returns the Limiter of plan, for decisions in code (Allow,
// AllowN, Peek, Reset), and whether there is such a plan.
func (p *Plans) Limiter(plan string) (*ratekit.Limiter, bool) {
	l, ok := p.limiters[plan]
	return l, ok
}

// Names returns the plans' names, sorted.
func (p *Plans) Names() []string { return slices.Sorted(maps.Keys(p.limiters)) }

// Middleware returns ratekit.Middleware for per-plan limits: plan(r) names
// the request's plan and key(r) its subject, charged to its plan's limits
// under opts (applied to every plan). An error from plan, or an unknown plan
// (ErrUnknownPlan), is a key error: by default a 400, uncounted
// (ratekit.WithKeyErrorPolicy). It panics if plan or key is nil.
func (p *Plans) Middleware(plan func(r *http.Request) (string, error), key ratekit.KeyFunc, opts ...ratekit.Option) func(http.Handler) http.Handler {
	if plan == nil || key == nil || len(p.limiters) == 0 {
		panic("ratekit: plans: Middleware needs Plans built by New, a plan function and a KeyFunc")
	}
	return func(next http.Handler) http.Handler {
		handlers := make(map[string]http.Handler, len(p.limiters))
		for name, l := range p.limiters {
			handlers[name] = ratekit.Middleware(l, key, opts...)(next)
		}
		resolve := func(r *http.Request) (http.Handler, error) { // r's plan's handler, or the error that stops r
			name, err := plan(r)
			if err != nil {
				return nil, err
			}
			if h, ok := handlers[name]; ok {
				return h, nil
			}
			return nil, fmt.Errorf("%w %q", ErrUnknownPlan, name)
		}
		// A request without a usable plan meets the key error policy
		// through any plan's pipeline, its key function giving the error.
		refuse := ratekit.Middleware(p.limiters[p.Names()[0]], func(r *http.Request) (string, error) {
			_, err := resolve(r)
			return "", err
		}, opts...)(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h, err := resolve(r); err == nil {
				h.ServeHTTP(w, r)
				return
			}
			refuse.ServeHTTP(w, r)
		})
	}
}
