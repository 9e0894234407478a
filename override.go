package ratekit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/observe"
)

// An Override is the numbers in force of one of a Limiter's limits for one
// subject, in place of the limit's own, as Limiter.Override set them. It is
// a plain value, safe to copy.
type Override struct {
	// Subject is the subject (the key) it applies to.
	Subject string
	// Limit is the limit in force: the Limiter's limit of its name, with
	// the override's numbers.
	Limit Limit
	// Expires is when the override ends, on the store's clock; zero when it
	// lasts until cleared.
	Expires time.Time
}

// maxOverrideSubject is the longest subject an override may name, in
// bytes: a store keeps the subject beside the override, to list it.
const maxOverrideSubject = 512

// overrider is what Limiter.Override and its kin need of a Store; package
// store documents it as Overrider.
type overrider interface {
	SetOverride(ctx context.Context, subject string, l Limit, expiry time.Duration) error
	ClearOverride(ctx context.Context, subject string, l Limit) error
	ListOverrides(ctx context.Context, subject string, limits []Limit, f func(subject string, l Limit, expires time.Time)) error
}

// Override makes limit's numbers the ones in force, for subject, of the
// Limiter's limit named limit.Name(), for expiry (0: until cleared): every
// decision on any instance that shares the store sees it from the next one
// on (on a Redis store the override is read in the decision's own call).
// The limit's state carries over by its carry rule (see Carry): raising a
// window's quota from 100 to 200 after 100 requests admits 100 more in
// that window. Headers and bodies show the numbers in force.
//
// An override changes numbers only: limit must be valid, of the same
// algorithm and shape (bucket width, calendar period and zone) as the
// Limiter's limit of its name, and may not add a block to a limit without
// one; a custom limit cannot be overridden. Override reports what is wrong
// (matching ErrInvalidLimit) and writes nothing. An override equal to the
// limit's own numbers clears it. Overrides apply to every Limiter on the
// store with a limit of that name and algorithm; Reset leaves them.
func (l *Limiter) Override(ctx context.Context, subject string, limit Limit, expiry time.Duration) error {
	o, s, err := l.overrides(subject)
	if err != nil {
		return err
	}
	base, err := s.overridable(limit)
	if err != nil {
		return err
	}
	if expiry < 0 || expiry > 0 && expiry < time.Millisecond {
		return fmt.Errorf("%w: an override's expiry must be 0 (until cleared) or at least 1ms (got %s)", ErrInvalidLimit, expiry)
	}
	in, err := base.With(limit.Spec())
	if err != nil {
		return err
	}
	if in.Spec() == base.Spec() {
		in, err = base, o.ClearOverride(ctx, subject, base)
	} else {
		err = o.SetOverride(ctx, subject, in, expiry)
	}
	if err == nil {
		l.inForce(subject, in)
	}
	return l.report(ctx, subject, in, err)
}

// ClearOverride ends subject's override of the Limiter's limit named name,
// or, when name is "", of every limit of the Limiter. Clearing what is not
// overridden does nothing.
func (l *Limiter) ClearOverride(ctx context.Context, subject, name string) error {
	o, s, err := l.overrides(subject)
	if err != nil {
		return err
	}
	limits := s.limits
	if name != "" {
		i, ok := s.byName[name]
		if !ok {
			return s.unknown(name)
		}
		limits = limits[i : i+1]
	}
	for _, lim := range limits {
		err := o.ClearOverride(ctx, subject, lim)
		if err == nil {
			l.inForce(subject, lim)
		}
		if err := l.report(ctx, subject, lim, err); err != nil {
			return err
		}
	}
	return nil
}

// inForce tells the instance's count of requests in flight that lim is in
// force for subject, when it is the InFlight limit the count refuses by:
// this instance sees its own override at once, others on their next
// answer from the store.
func (l *Limiter) inForce(subject string, lim Limit) {
	if g := l.set.Load().gate; g != nil && lim.Name() == g.denial.Limit.Name() {
		g.inForce(subject, lim)
	}
}

// report hands the observers of the Limiter's Guards an Overridden event:
// lim is now in force for subject, unless err says the change failed; it
// returns err.
func (l *Limiter) report(ctx context.Context, subject string, lim Limit, err error) error {
	l.mu.Lock()
	obs := observe.Join(l.observers...)
	l.mu.Unlock()
	if obs != nil {
		obs.Observe(ctx, observe.Event{Outcome: observe.Overridden, Policy: lim.Name(), Quota: lim.def().headerQ, Subject: subject, Err: err})
	}
	return err
}

// Overrides returns subject's overrides of the Limiter's limits, or, when
// subject is "", every subject's (for operators: it reads every override
// the store holds), sorted by subject and then in the Limiter's order.
func (l *Limiter) Overrides(ctx context.Context, subject string) ([]Override, error) {
	s := l.set.Load()
	o, ok := l.store.(overrider)
	if !ok {
		return nil, errNoOverrides(l.store)
	}
	var out []Override
	err := o.ListOverrides(ctx, subject, s.limits, func(sub string, lim Limit, expires time.Time) {
		out = append(out, Override{Subject: sub, Limit: lim, Expires: expires})
	})
	return out, err
}

// overrides returns the Limiter's store as an overrider and its limits, or
// the error for a store without overrides or a subject no override may name.
func (l *Limiter) overrides(subject string) (overrider, *limitSet, error) {
	o, ok := l.store.(overrider)
	switch {
	case !ok:
		return nil, nil, errNoOverrides(l.store)
	case subject == "":
		return nil, nil, ErrEmptyKey
	case len(subject) > maxOverrideSubject:
		return nil, nil, fmt.Errorf("%w: an override's subject must be at most %d bytes (got %d); overrides keep their subject to list it",
			ErrInvalidLimit, maxOverrideSubject, len(subject))
	}
	return o, l.set.Load(), nil
}

// errNoOverrides is the error of a store that holds no overrides.
func errNoOverrides(s Store) error {
	return fmt.Errorf("%w: the store (%T) holds no overrides; use store/memstore or a Redis store, alone or under store/denycache or store/fallback", ErrInvalidLimit, s)
}

// overridable returns the limit of s that limit overrides, or why it cannot.
func (s *limitSet) overridable(limit Limit) (Limit, error) {
	if err := limit.validate(); err != nil {
		return Limit{}, err
	}
	i, ok := s.byName[limit.Name()]
	if !ok {
		return Limit{}, s.unknown(limit.Name())
	}
	base, d, bd := s.limits[i], limit.def(), s.limits[i].def()
	r := algo.Of(bd.Algorithm)
	bad := func(field, format string, args ...any) (Limit, error) {
		return Limit{}, &LimitError{Limit: d.Name, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch _, builtin := algo.Lookup(bd.Algorithm); {
	case !builtin:
		return bad("algorithm", "is custom: its numbers are its state's shape and cannot be overridden")
	case d.Algorithm != bd.Algorithm:
		return bad("algorithm", "is %s, the Limiter's %q is %s: an override changes numbers only", d.Algorithm, d.Name, bd.Algorithm)
	case r.Shape(&d.Spec) != r.Shape(&bd.Spec):
		return bad("shape", "%s differs from the Limiter's (%s): an override keeps the bucket width, period and zone", limit, base)
	case bd.Block == 0 && d.Block > 0:
		return bad("block", "the Limiter's %q has none; an override can change a block, not add one", d.Name)
	}
	return base, nil
}

// unknown is the error for a name no limit of s has.
func (s *limitSet) unknown(name string) error {
	names := make([]string, len(s.limits))
	for i, l := range s.limits {
		names[i] = l.Name()
	}
	return &LimitError{Limit: name, Field: "name", Reason: "names no limit of the Limiter (it has " + strings.Join(names, ", ") + ")"}
}
