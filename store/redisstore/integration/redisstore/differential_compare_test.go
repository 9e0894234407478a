package redisstore_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratekit/ratekit"
)

// This file compares the answers of the differential test's two stores.

// statesOf returns d's per-limit states: d.States, or for a decision about
// one limit its own fields as one state.
func statesOf(d ratekit.Decision) []ratekit.LimitState {
	if d.States != nil {
		return d.States
	}
	return []ratekit.LimitState{{
		Limit: d.Limit, Allowed: d.Allowed, Remaining: d.Remaining, ResetAfter: d.ResetAfter, RetryAfter: d.RetryAfter,
		EffectiveWindow: d.EffectiveWindow, Unsatisfiable: d.Unsatisfiable, Blocked: d.Blocked, Delay: d.Delay,
		Suppression: d.Suppression,
	}}
}

// differ appends to out a line naming field when memstore's a and
// redisstore's b differ.
func differ[T comparable](out []string, field string, a, b T) []string {
	if a != b {
		return append(out, fmt.Sprintf("%s: mem %v, redis %v", field, a, b))
	}
	return out
}

// diffDecisions compares two decisions about set, field by field and
// state by state, and their receipts. It returns a line per difference.
func diffDecisions(set []dlimit, a, b ratekit.Decision) (out []string) {
	out = differ(out, "Allowed", a.Allowed, b.Allowed)
	out = differ(out, "Limit", a.Limit.Spec().ID, b.Limit.Spec().ID)
	out = diffInForce(out, "Limit in force", a.Limit, b.Limit)
	out = differ(out, "Remaining", a.Remaining, b.Remaining)
	out = differ(out, "ResetAfter", a.ResetAfter, b.ResetAfter)
	out = differ(out, "RetryAfter", a.RetryAfter, b.RetryAfter)
	out = differ(out, "EffectiveWindow", a.EffectiveWindow, b.EffectiveWindow)
	out = differ(out, "Unsatisfiable", a.Unsatisfiable, b.Unsatisfiable)
	out = differ(out, "Blocked", a.Blocked, b.Blocked)
	out = differ(out, "Delay", a.Delay, b.Delay)
	out = differ(out, "Suppression", a.Suppression, b.Suppression)
	out = differ(out, "States == nil", a.States == nil, b.States == nil)
	out = differ(out, "Receipt != nil", a.Receipt != nil, b.Receipt != nil)
	sa, sb := statesOf(a), statesOf(b)
	if len(sa) != len(sb) {
		return append(out, fmt.Sprintf("len(States): mem %d, redis %d", len(sa), len(sb)))
	}
	for i := range sa {
		x, y := sa[i], sb[i]
		n := len(out)
		f := fmt.Sprintf("States[%d] (%s).", i, x.Limit.Name())
		out = differ(out, f+"Limit", x.Limit.Spec().ID, y.Limit.Spec().ID)
		out = diffInForce(out, f+"Limit in force", x.Limit, y.Limit)
		if len(set) > i {
			out = differ(out, f+"Limit (want the set's)", x.Limit.Spec().ID, set[i].l.Spec().ID)
		}
		x.Limit, y.Limit = ratekit.Limit{}, ratekit.Limit{}
		out = differ(out, f+"Allowed", x.Allowed, y.Allowed)
		out = differ(out, f+"Remaining", x.Remaining, y.Remaining)
		out = differ(out, f+"ResetAfter", x.ResetAfter, y.ResetAfter)
		out = differ(out, f+"RetryAfter", x.RetryAfter, y.RetryAfter)
		out = differ(out, f+"EffectiveWindow", x.EffectiveWindow, y.EffectiveWindow)
		out = differ(out, f+"Unsatisfiable", x.Unsatisfiable, y.Unsatisfiable)
		out = differ(out, f+"Blocked", x.Blocked, y.Blocked)
		out = differ(out, f+"Delay", x.Delay, y.Delay)
		out = differ(out, f+"Suppression", x.Suppression, y.Suppression)
		if x != y && len(out) == n {
			out = append(out, fmt.Sprintf("%s: mem %+v, redis %+v", f, x, y)) // a field added to LimitState
		}
	}
	if a.Receipt != nil && b.Receipt != nil {
		out = append(out, diffReceipts(set, a.Receipt, b.Receipt)...)
	}
	return out
}

// diffInForce appends to out a line naming field when the limits in force
// memstore and redisstore report, a and b, differ in any number.
func diffInForce(out []string, field string, a, b ratekit.Limit) []string {
	if a.Spec() != b.Spec() {
		return append(out, fmt.Sprintf("%s: mem %s (%+v), redis %s (%+v)", field, numbersOf(a), a.Spec(), numbersOf(b), b.Spec()))
	}
	return out
}

// diffReceipts compares two receipts of a charge to set: what each limit
// holds exactly, and where it sits (Ends) exactly, but for a fixed
// window's (or calendar period's) end, which the engine reads from PTTL in whole milliseconds
// (now + PTTL, now in µs) and memstore keeps as the window's end
// millisecond: they must name the same millisecond. Lease names are each
// store's own; both have one or neither. It returns a line per difference.
func diffReceipts(set []dlimit, a, b *ratekit.Receipt) (out []string) {
	out = differ(out, "Receipt.Cost", a.Cost, b.Cost)
	out = differ(out, "Receipt.At", a.At, b.At)
	out = differ(out, "Receipt.Lease != \"\"", a.Lease != "", b.Lease != "")
	out = differ(out, "Receipt.Fallback", a.Fallback, b.Fallback)
	if len(a.Ends) != len(set) || len(b.Ends) != len(set) || len(a.Held) != len(set) || len(b.Held) != len(set) {
		return append(out, fmt.Sprintf("receipt sizes: mem %d/%d, redis %d/%d, limits %d", len(a.Ends), len(a.Held), len(b.Ends), len(b.Held), len(set)))
	}
	for i, d := range set {
		f := fmt.Sprintf("Receipt[%d] (%s).", i, d.l.Name())
		out = differ(out, f+"Held", a.Held[i], b.Held[i])
		ea, eb := a.Ends[i], b.Ends[i]
		if a := d.l.Spec().Algorithm; a == "fixed" || a == "calendar" {
			ea, eb = floorDiv(ea, 1000), floorDiv(eb, 1000)
		}
		if ea != eb {
			out = differ(out, f+"Ends", a.Ends[i], b.Ends[i])
		}
	}
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// decisionSpans returns the non-zero times of d and its states: clock steps
// of these lengths land where the decision said something changes.
func decisionSpans(d ratekit.Decision) []time.Duration {
	var out []time.Duration
	for _, st := range statesOf(d) {
		for _, x := range []time.Duration{st.ResetAfter, st.RetryAfter, st.EffectiveWindow, st.Delay} {
			if x > 0 {
				out = append(out, x)
			}
		}
	}
	return out
}

// fmtDecision writes d (its states, when several) or err on one line.
func fmtDecision(d ratekit.Decision, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	var b strings.Builder
	for i, st := range statesOf(d) {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s allowed=%v rem=%d reset=%v retry=%v ew=%v", st.Limit.Name(), st.Allowed, st.Remaining, st.ResetAfter, st.RetryAfter, st.EffectiveWindow)
		if st.Unsatisfiable {
			b.WriteString(" unsat")
		}
		if st.Blocked {
			b.WriteString(" blocked")
		}
		if st.Delay > 0 {
			fmt.Fprintf(&b, " delay=%v", st.Delay)
		}
	}
	if d.Receipt != nil {
		b.WriteString(" " + fmtReceipt(d.Receipt))
	}
	return b.String()
}

func fmtReceipt(rc *ratekit.Receipt) string {
	return fmt.Sprintf("receipt{cost=%d at=%d ends=%v held=%v lease=%q}", rc.Cost, rc.At, rc.Ends, rc.Held, rc.Lease)
}
