package ratekit

import (
	"context"
	"strings"
)

// newLimiter is New once limits are found valid: it splits them into
// enforced and shadow ones and prepares them.
func newLimiter(store Store, limits []Limit) (*Limiter, error) {
	limits = append([]Limit(nil), limits...) // the store may keep it
	l := &Limiter{}
	var enforced, shadow []Limit
	var names, held []string
	for _, lim := range limits {
		names = append(names, lim.Name())
		if lim.def().Concurrent {
			if l.lease == 0 || lim.def().Window < l.lease {
				l.lease = lim.def().Window
			}
			held = append(held, lim.Name())
		}
		if lim.def().shadow {
			shadow = append(shadow, lim)
		} else {
			enforced = append(enforced, lim)
		}
	}
	l.names, l.held = strings.Join(names, ","), strings.Join(held, ",")
	l.gate = newGate(enforced)
	l.policy = policyHeader(enforced)
	if len(enforced) == 0 {
		l.policy = policyHeader(shadow)
	}
	var err error
	if l.all, err = store.Prepare(limits); err != nil {
		return nil, err
	}
	l.settler, _ = l.all.(settler)
	switch {
	case len(shadow) == 0:
		l.enforcedP = l.all
	case len(enforced) == 0:
		l.shadowP = l.all
	default:
		if l.enforcedP, err = store.Prepare(enforced); err != nil {
			return nil, err
		}
		if l.shadowP, err = store.Prepare(shadow); err != nil {
			return nil, err
		}
		l.settler, _ = l.enforcedP.(settler)
	}
	if l.lease > 0 && l.settler == nil {
		return nil, &settleError{errCannotSettle}
	}
	if nb, ok := store.(nonBlocking); ok {
		l.unbounded = nb.NonBlocking()
	}
	return l, nil
}

// ask is one store call: Take, or Peek when peek is set (cost is then 1).
func (l *Limiter) ask(ctx context.Context, key string, p Prepared, cost int64, peek bool) (Decision, error) {
	if peek {
		return p.Peek(ctx, key)
	}
	return p.Take(ctx, key, cost)
}

// decide asks the store about the enforced limits, then, when they admit
// the request, about the shadow limits: a shadow limit counts what it would
// count if it were enforced, and never refuses.
func (l *Limiter) decide(ctx context.Context, key string, cost int64, peek bool) (Decision, error) {
	p := l.enforcedP
	if p == nil {
		p = l.shadowP
	}
	d, err := l.ask(ctx, key, p, cost, peek)
	if err != nil {
		return Decision{}, err
	}
	d.policy = l.policy
	switch {
	case l.enforcedP == nil:
		return passShadow(d), nil
	case d.Allowed && l.shadowP != nil:
		if err := l.addShadow(ctx, key, cost, peek, &d); err != nil {
			return Decision{}, err
		}
	}
	return d, nil
}

// addShadow asks the store about the shadow limits of a call the enforced
// limits admitted with d, and records in d whether one would have refused.
func (l *Limiter) addShadow(ctx context.Context, key string, cost int64, peek bool, d *Decision) error {
	s, err := l.ask(ctx, key, l.shadowP, cost, peek)
	if err != nil {
		return err
	}
	if !s.Allowed {
		d.ShadowDenied, d.shadow = true, s.Limit
	}
	d.Fallback = d.Fallback || s.Fallback
	return nil
}

// passShadow turns a decision of shadow limits alone into one that admits
// the request, recording whether it would have been refused.
func passShadow(d Decision) Decision {
	if d.Allowed {
		return d
	}
	d.Allowed, d.ShadowDenied, d.shadow = true, true, d.Limit
	d.RetryAfter, d.Blocked, d.Unsatisfiable = 0, false, false
	for i := range d.States {
		d.States[i].Allowed = true
		d.States[i].RetryAfter, d.States[i].Blocked, d.States[i].Unsatisfiable = 0, false, false
	}
	return d
}
