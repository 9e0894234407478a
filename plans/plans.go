package plans

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/bounds"
)

// A Plans holds one Limiter per plan over one store. Update replaces the
// plans and their numbers while it serves, counts kept. It is safe for
// concurrent use; the zero Plans has no plans.
type Plans struct {
	store ratekit.Store
	mu    sync.Mutex              // one Update at a time
	cur   atomic.Pointer[version] // replaced whole by Update
}

// A version is the plans as one New or Update made them.
type version struct {
	limiters map[string]*ratekit.Limiter
	limits   map[string][]ratekit.Limit
}

// ErrUnknownPlan is the error of a request whose plan is not one of the
// Plans': a key error, so by default it gets a 400 (ratekit.WithKeyErrorPolicy).
var ErrUnknownPlan = errors.New("ratekit: plans: unknown plan")

// New builds a Limiter for every plan of plans (name to limits) on store;
// plan names follow the rules of limit names. Every problem of every plan is
// reported at once. Name each plan's limits (Limit.Named): clients see the
// names, and limits of one name and algorithm share their counters in every
// plan (a service-wide daily cap, say; a subject that moves to another plan
// keeps its counts under a limit of the same name).
func New(store ratekit.Store, plans map[string][]ratekit.Limit) (*Plans, error) {
	p := &Plans{store: store}
	if err := p.Update(plans); err != nil {
		return nil, err
	}
	return p, nil
}

// Update replaces the plans with plans, checked as New checks them: every
// problem is reported at once and then nothing changes. A plan that stays
// keeps its Limiter, updated in place (ratekit.Limiter.Update: counts carry
// over by name and algorithm); a new plan gets one; a plan left out is
// gone, and its requests meet ErrUnknownPlan. Middleware built before
// serves the new plans from the next request on.
func (p *Plans) Update(plans map[string][]ratekit.Limit) error {
	if len(plans) == 0 {
		return errors.New("ratekit: plans: no plans; give at least one, e.g. {\"free\": {ratekit.FixedWindow(100, time.Minute).Named(\"free\")}}")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.cur.Load()
	if old == nil {
		old = &version{}
	}
	next := make(map[string]*ratekit.Limiter, len(plans))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(plans)) {
		if why := bounds.Name(name); why != "" {
			errs = append(errs, fmt.Errorf("ratekit: plans: plan name %q %s", name, why))
			continue
		}
		l, err := ratekit.New(p.store, plans[name]...) // checks the plan; the Limiter of a new plan
		if was, ok := old.limits[name]; err == nil && ok && holds(plans[name]) != holds(was) {
			err = fmt.Errorf("%w: InFlight limits cannot be added to a plan without them, or removed from one", ratekit.ErrInvalidLimit)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ratekit: plans: plan %q: %w", name, err))
			continue
		}
		next[name] = l
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	limits := make(map[string][]ratekit.Limit, len(plans))
	for name := range next {
		limits[name] = slices.Clone(plans[name])
		if l := old.limiters[name]; l != nil {
			if err := l.Update(plans[name]...); err != nil { // checked above: not expected
				return fmt.Errorf("ratekit: plans: plan %q: %w", name, err)
			}
			next[name] = l
		}
	}
	p.cur.Store(&version{limiters: next, limits: limits})
	return nil
}

// holds reports whether limits include an InFlight limit.
func holds(limits []ratekit.Limit) bool {
	return slices.ContainsFunc(limits, func(l ratekit.Limit) bool { return l.Spec().Concurrent })
}

// current returns the plans as they stand (no plans for the zero Plans).
func (p *Plans) current() *version {
	if v := p.cur.Load(); v != nil {
		return v
	}
	return &version{}
}

// Limiter returns the Limiter of plan, for decisions in code (Allow,
// AllowN, Peek, Reset, Override), and whether there is such a plan.
func (p *Plans) Limiter(plan string) (*ratekit.Limiter, bool) {
	l, ok := p.current().limiters[plan]
	return l, ok
}

// Names returns the plans' names, sorted.
func (p *Plans) Names() []string { return slices.Sorted(maps.Keys(p.current().limiters)) }

// Middleware returns ratekit.Middleware for per-plan limits: plan(r) names
// the request's plan and key(r) its subject, charged to its plan's limits
// under opts (applied to every plan), as the plans stand when the request
// arrives. An error from plan, or an unknown plan (ErrUnknownPlan), is a key
// error: by default a 400, uncounted (ratekit.WithKeyErrorPolicy). It panics
// if plan or key is nil.
func (p *Plans) Middleware(plan func(r *http.Request) (string, error), key ratekit.KeyFunc, opts ...ratekit.Option) func(http.Handler) http.Handler {
	if plan == nil || key == nil || len(p.current().limiters) == 0 {
		panic("ratekit: plans: Middleware needs Plans built by New, a plan function and a KeyFunc")
	}
	return func(next http.Handler) http.Handler {
		s := &served{p: p, plan: plan, key: key, opts: opts, next: next}
		return http.HandlerFunc(s.serve)
	}
}

// served is one Middleware's handlers, one per plan's Limiter, made for
// the plans as they stand and made again, reusing those of the Limiters
// that stay, when Update changes them.
type served struct {
	p    *Plans
	plan func(r *http.Request) (string, error)
	key  ratekit.KeyFunc
	opts []ratekit.Option
	next http.Handler

	mu  sync.Mutex
	cur atomic.Pointer[handlers]
}

// handlers are the handlers of one version of the plans.
type handlers struct {
	of     *version // the version they serve
	byPlan map[string]http.Handler
	byLim  map[*ratekit.Limiter]http.Handler
	refuse http.Handler // a request without a usable plan
}

func (s *served) serve(w http.ResponseWriter, r *http.Request) {
	h := s.handlers()
	name, err := s.plan(r)
	if err == nil {
		if next, ok := h.byPlan[name]; ok {
			next.ServeHTTP(w, r)
			return
		}
		err = fmt.Errorf("%w %q", ErrUnknownPlan, name)
	}
	// A request without a usable plan meets the key error policy through
	// any plan's pipeline, its key function giving the error.
	h.refuse.ServeHTTP(w, r)
}

// handlers returns the handlers of the plans as they now stand.
func (s *served) handlers() *handlers {
	v := s.p.current()
	if h := s.cur.Load(); h != nil && h.of == v {
		return h
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.cur.Load(); h != nil && h.of == v {
		return h
	}
	m := v.limiters
	h := &handlers{of: v, byPlan: make(map[string]http.Handler, len(m)), byLim: make(map[*ratekit.Limiter]http.Handler, len(m))}
	var was map[*ratekit.Limiter]http.Handler
	if old := s.cur.Load(); old != nil {
		was = old.byLim
	}
	for name, l := range m {
		mw := was[l]
		if mw == nil {
			mw = ratekit.Middleware(l, s.key, s.opts...)(s.next)
		}
		h.byPlan[name], h.byLim[l] = mw, mw
	}
	first := m[slices.Min(slices.Collect(maps.Keys(m)))]
	h.refuse = ratekit.Middleware(first, func(r *http.Request) (string, error) {
		name, err := s.plan(r)
		if err == nil {
			err = fmt.Errorf("%w %q", ErrUnknownPlan, name)
		}
		return "", err
	}, s.opts...)(s.next)
	s.cur.Store(h)
	return h
}
