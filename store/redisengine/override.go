package redisengine

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/carry"
	"github.com/ratekit/ratekit/internal/algo"
	"github.com/ratekit/ratekit/internal/bounds"
)

// indexKey returns the key of the index of the subjects with overrides.
func (e *Engine) indexKey() string { return e.prefix + ":overrides" }

// SetOverride makes l's numbers the ones in force of the limit l.Spec().ID
// names, for subject, for expiry (0: until cleared), through c: in the
// override key beside the limit's state key, which every decision about
// the subject reads in its own call, with a TTL to the override's end
// (lua/override.lua). Under carry.Reset the limit's state for subject is
// deleted in the same call, and by the first decision after the
// override's end, which finds the override's key kept for that.
// The subject is then added to the index of subjects with overrides, in a
// call of its own (its key is in another cluster slot). See
// store.Overrider.
func (e *Engine) SetOverride(ctx context.Context, c Conn, subject string, l ratekit.Limit, expiry time.Duration) error {
	t, err := Tag(subject)
	if err != nil {
		return err
	}
	sp := algo.Spec(l.Spec())
	r := algo.Of(sp.Algorithm)
	args := r.Args(&sp, 0)
	p2, p3 := itoa(args[1]), itoa(args[2])
	if from, until := r.Period(&sp, 0); from != math.MinInt64 || until != math.MaxInt64 {
		p2, p3 = "-", "-" // the arguments that follow the clock stay the limit's own
	}
	var b strings.Builder
	b.WriteString(boolDigit(sp.Carry == carry.Reset))
	for _, v := range []string{itoa(args[0]), p2, p3, itoa(sp.Block.Milliseconds())} {
		b.WriteString(" " + v)
	}
	for _, n := range algo.NumbersOf(&sp) {
		b.WriteString(" " + itoa(n))
	}
	cmd := &Command{Keys: e.overrideKeys(t, sp.ID), head: []string{"set", sp.ID, b.String(), itoa(expiry.Microseconds()), itoa(horizon(&sp))}}
	reply, err := e.run(ctx, c, progOverride, cmd)
	if err != nil {
		return err
	}
	ends, _, err := e.integers(reply, 1, 0, "override")
	if err != nil {
		return err
	}
	score := "+inf"
	if ends[0] > 0 {
		score = itoa(ends[0])
	}
	_, err = e.run(ctx, c, progOverride, &Command{Keys: []string{e.indexKey()}, head: []string{"index-add", subject, score}})
	return err
}

// ClearOverride ends subject's override of the limit l.Spec().ID names,
// through c, deleting the state a carry.Reset limit had under it; the
// subject leaves the index once it has no override left. See
// store.Overrider.
func (e *Engine) ClearOverride(ctx context.Context, c Conn, subject string, l ratekit.Limit) error {
	t, err := Tag(subject)
	if err != nil {
		return err
	}
	sp := algo.Spec(l.Spec())
	reply, err := e.run(ctx, c, progOverride, &Command{Keys: e.overrideKeys(t, sp.ID), head: []string{"clear", sp.ID}})
	if err != nil {
		return err
	}
	left, _, err := e.integers(reply, 1, 0, "override")
	if err != nil || left[0] > 0 {
		return err
	}
	_, err = e.run(ctx, c, progOverride, &Command{Keys: []string{e.indexKey()}, head: []string{"index-del", subject}})
	return err
}

// ListOverrides calls f with each override in force of limits, for
// subject or, when subject is "", for every subject in the index, sorted
// by subject and then in the order of limits; one call per subject, and
// one for the index. See store.Overrider.
func (e *Engine) ListOverrides(ctx context.Context, c Conn, subject string, limits []ratekit.Limit, f func(string, ratekit.Limit, time.Time)) error {
	subjects := []string{subject}
	if subject == "" {
		reply, err := e.run(ctx, c, progOverride, &Command{Keys: []string{e.indexKey()}, head: []string{"index-list"}})
		if err != nil {
			return err
		}
		if subjects, err = e.strings(reply, "override index"); err != nil {
			return err
		}
		slices.Sort(subjects)
	}
	for _, sub := range subjects {
		t, err := Tag(sub)
		if err != nil {
			return err
		}
		keys, head := []string{e.overrideKey(t)}, []string{"read"}
		for _, l := range limits {
			id := l.Spec().ID
			keys, head = append(keys, e.key(t, id, ":o")), append(head, id)
		}
		reply, err := e.run(ctx, c, progOverride, &Command{Keys: keys, head: head})
		if err != nil {
			return err
		}
		fields, err := e.strings(reply, "override")
		if err != nil {
			return err
		}
		type found struct {
			limit ratekit.Limit
			ends  time.Time
		}
		var all []found // in the order of limits, as the reply has them
		const per = 2 + algo.NumbersLen
		for ; len(fields) >= per; fields = fields[per:] {
			i := slices.IndexFunc(limits, func(l ratekit.Limit) bool { return l.Spec().ID == fields[0] })
			if i < 0 {
				continue // another Limiter's limit
			}
			var n algo.Numbers
			var ends int64
			ok := parseInt(fields[1], &ends)
			for j := range n {
				ok = ok && parseInt(fields[2+j], &n[j])
			}
			if !ok {
				return e.errorf("malformed override %q of subject %q in Redis", fields[:per], sub)
			}
			sp := algo.Spec(limits[i].Spec())
			n.Apply(&sp)
			in, err := limits[i].With(ratekit.Spec(sp))
			if err != nil {
				continue // numbers the limit can no longer take: not in force
			}
			var at time.Time
			if ends > 0 {
				at = time.UnixMicro(ends)
			}
			all = append(all, found{in, at})
		}
		for _, o := range all {
			f(sub, o.limit, o.ends)
		}
	}
	return nil
}

// overrideKeys returns the keys of an override's call for tag t: the list
// of the subject's overrides, then the override, state and block keys of
// the limit id names.
func (e *Engine) overrideKeys(t, id string) []string {
	return []string{e.overrideKey(t), e.key(t, id, ":o"), e.key(t, id, ""), e.key(t, id, ":block")}
}

// horizon returns, in µs, the longest a state of the limit s may live:
// how long past its end a carry.Reset limit's override must be kept, for
// the state made under it to go with it.
func horizon(s *algo.Spec) int64 {
	h := max(s.Window, time.Duration(float64(s.Interval)*float64(s.Quota)), s.MaxWait) + s.Precision
	if s.Algorithm == algo.Calendar {
		h = bounds.MaxWindow
	}
	return (min(h, bounds.MaxWindow) + s.Block).Microseconds()
}

// strings checks that reply is an array of strings and returns them.
func (e *Engine) strings(reply any, what string) ([]string, error) {
	r, ok := reply.([]any)
	if !ok {
		return nil, e.errorf("unexpected %s reply %T", what, reply)
	}
	out := make([]string, len(r))
	for i, v := range r {
		if out[i], ok = v.(string); !ok {
			return nil, e.errorf("%s reply element %d is %T, want a string", what, i, v)
		}
	}
	return out, nil
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// parseInt parses s into *n, reporting whether it is an integer.
func parseInt(s string, n *int64) bool {
	v, err := strconv.ParseInt(s, 10, 64)
	*n = v
	return err == nil
}
