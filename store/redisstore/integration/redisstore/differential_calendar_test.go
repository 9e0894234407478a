package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the zones of the calendar sequences, on machines without a zone database

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

// This file generates the calendar sequences of the differential test:
// Calendar limits in seven zones and windows aligned to the clock, beside
// the other algorithms, on a clock that starts shortly before a boundary of
// interest (a DST change, the day, week, month or year around it) and moves
// in steps that make several periods pass. It also holds an oracle of the
// periods, from the definition (a period lasts while the zone's clock, cut
// to the period's unit, shows one value), which memstore's answers must
// meet, and the counts the test reports.

// diffZones are the zones of the calendar sequences: 23/25-hour days (New
// York, London), a 30-minute DST shift (Lord Howe), +05:45 (Kathmandu),
// +12:45/+13:45 with DST at 02:45 (Chatham), +13 without DST (Apia).
var diffZones = []string{"America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham", "Pacific/Apia", "Europe/London", "UTC"}

// diffPeriods are the calendar periods sequences draw from.
var diffPeriods = []calendar.Period{calendar.Minute, calendar.Hour, calendar.Day, calendar.Week, calendar.WeekFrom(time.Sunday), calendar.Month, calendar.Year}

// diffZone returns the zone named name (replays build their limits with
// it).
func diffZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(fmt.Sprintf("zone %s: %v (import time/tzdata)", name, err))
	}
	return loc
}

// A diffAnchor is an instant a calendar sequence starts shortly before: a
// zone's DST change, or the start of a local day, week, month or year
// around one, and the periods whose boundaries it is about.
type diffAnchor struct {
	zone    string
	at      time.Time
	kind    string
	periods []calendar.Period
}

var (
	diffAnchorsOnce sync.Once
	diffAnchorsAll  []diffAnchor
)

// diffAnchors returns the anchors of every zone in 2026: each DST change,
// the local midnights that start and end its day and the weeks around it,
// and for every zone the starts of March, April, October, November and
// December, and the year's end (2027-01-01).
func diffAnchors() []diffAnchor {
	diffAnchorsOnce.Do(func() {
		near := []calendar.Period{calendar.Minute, calendar.Hour, calendar.Hour, calendar.Day, calendar.Day, calendar.Week, calendar.WeekFrom(time.Sunday)}
		days := []calendar.Period{calendar.Hour, calendar.Day, calendar.Day, calendar.Week, calendar.WeekFrom(time.Sunday)}
		weeks := []calendar.Period{calendar.Day, calendar.Week, calendar.WeekFrom(time.Sunday)}
		months := []calendar.Period{calendar.Day, calendar.Week, calendar.Month, calendar.Month}
		years := []calendar.Period{calendar.Hour, calendar.Day, calendar.Week, calendar.WeekFrom(time.Sunday), calendar.Month, calendar.Year, calendar.Year}
		for _, name := range diffZones {
			loc := diffZone(name)
			for _, tr := range zoneChanges(loc, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
				diffAnchorsAll = append(diffAnchorsAll, diffAnchor{name, tr, "dst", near})
				y, m, d := tr.In(loc).Date()
				day := time.Date(y, m, d, 0, 0, 0, 0, loc)
				diffAnchorsAll = append(diffAnchorsAll, diffAnchor{name, day, "day", days}, diffAnchor{name, day.AddDate(0, 0, 1), "day", days})
				for _, first := range []time.Weekday{time.Monday, time.Sunday} {
					w := day.AddDate(0, 0, -int((7+day.Weekday()-first)%7))
					diffAnchorsAll = append(diffAnchorsAll, diffAnchor{name, w, "week", weeks}, diffAnchor{name, w.AddDate(0, 0, 7), "week", weeks})
				}
			}
			for _, m := range []time.Month{time.March, time.April, time.October, time.November, time.December} {
				diffAnchorsAll = append(diffAnchorsAll, diffAnchor{name, time.Date(2026, m, 1, 0, 0, 0, 0, loc), "month", months})
			}
			diffAnchorsAll = append(diffAnchorsAll, diffAnchor{name, time.Date(2027, 1, 1, 0, 0, 0, 0, loc), "year", years})
		}
	})
	return diffAnchorsAll
}

// anchorKinds weighs the kinds of anchors: DST changes most.
var anchorKinds = []string{"dst", "dst", "dst", "dst", "day", "day", "week", "month", "month", "year", "year"}

// pickAnchor returns a random anchor of a kind drawn from anchorKinds.
func pickAnchor(rng *rand.Rand) diffAnchor {
	kind := anchorKinds[rng.IntN(len(anchorKinds))]
	var of []diffAnchor
	for _, a := range diffAnchors() {
		if a.kind == kind {
			of = append(of, a)
		}
	}
	return of[rng.IntN(len(of))]
}

// zoneChanges returns the instants in (from, to) at which loc's zone may
// change (ZoneBounds's ends). Where ZoneBounds returns an end that is not
// after the instant (the last UTC day of a leap year past the zone's
// explicit transitions, in zones with DST), it goes on from the next UTC year.
func zoneChanges(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	for t := from; ; {
		_, end := t.In(loc).ZoneBounds()
		if !end.IsZero() && !end.After(t) {
			end = time.Date(t.UTC().Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		if end.IsZero() || !end.Before(to) {
			return out
		}
		out = append(out, end)
		t = end
	}
}

// periodCode writes p as a Go expression.
func periodCode(p calendar.Period) string {
	switch p {
	case calendar.WeekFrom(time.Sunday):
		return "calendar.WeekFrom(time.Sunday)"
	case calendar.Minute:
		return "calendar.Minute"
	case calendar.Hour:
		return "calendar.Hour"
	case calendar.Day:
		return "calendar.Day"
	case calendar.Week:
		return "calendar.Week"
	case calendar.Month:
		return "calendar.Month"
	case calendar.Year:
		return "calendar.Year"
	}
	panic("no code for period " + string(p))
}

// timeCode writes t as a Go expression.
func timeCode(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("time.Date(%d, %d, %d, %d, %d, %d, %d, time.UTC)", t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond())
}

// genCalendar returns a random Calendar limit of period p in zone name,
// sometimes with a block: milliseconds, seconds, or a part of the period.
func genCalendar(rng *rand.Rand, p calendar.Period, name string) dlimit {
	q := int64(1 + rng.IntN(6))
	l := ratekit.Calendar(q, p, diffZone(name))
	code := fmt.Sprintf("ratekit.Calendar(%d, %s, diffZone(%q))", q, periodCode(p), name)
	return blockSlow(rng, l, code)
}

// genAligned returns a random FixedWindow aligned to the clock, of a few
// seconds to minutes.
func genAligned(rng *rand.Rand) dlimit {
	q := int64(1 + rng.IntN(6))
	w := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute}[rng.IntN(7)]
	return blockSlow(rng, ratekit.Calendar(q, calendar.Every(w), nil), fmt.Sprintf("ratekit.Calendar(%d, calendar.Every(%s), nil)", q, durCode(w)))
}

// blockSlow adds a block to a calendar limit l a quarter of the time: a
// few milliseconds, a second, a tenth or half of its usual length (its
// Window), or all of it and a second.
func blockSlow(rng *rand.Rand, l ratekit.Limit, code string) dlimit {
	if rng.IntN(4) == 0 {
		w := l.Spec().Window
		b := []time.Duration{2 * ms, 25 * ms, time.Second, (w / 10).Round(ms), (w / 2).Round(ms), w + time.Second}[rng.IntN(6)]
		l, code = l.Block(b), code+fmt.Sprintf(".Block(%s)", durCode(b))
	}
	return dlimit{l, code}
}

// slowLimit reports whether d is a limit of the calendar sequences: a
// Calendar period, or a window aligned to the clock of a second or more (an
// aligned window of milliseconds is one of the others).
func slowLimit(d dlimit) bool {
	sp := d.l.Spec()
	return sp.Algorithm == "calendar" && (sp.Location != nil || sp.Window >= time.Second)
}

// genCalendarSets returns the limit sets and start of a calendar sequence:
// an anchor of a random zone; one or two Calendar limits of the anchor's
// periods in its zone, sometimes one of any period in another zone, or an
// aligned window; 0 to 2 limits of the other algorithms; in a random order.
// The clock starts up to twice the shortest period's usual length (at most
// 3 h) before the anchor, on a whole second, millisecond or microsecond.
func genCalendarSets(rng *rand.Rand) ([][]dlimit, time.Time) {
	a := pickAnchor(rng)
	var all []dlimit
	for range 1 + rng.IntN(2) {
		all = append(all, genCalendar(rng, a.periods[rng.IntN(len(a.periods))], a.zone))
	}
	switch rng.IntN(4) {
	case 0:
		all = append(all, genCalendar(rng, diffPeriods[rng.IntN(len(diffPeriods))], diffZones[rng.IntN(len(diffZones))]))
	case 1:
		all = append(all, genAligned(rng))
	}
	for range []int{0, 0, 1, 1, 1, 2}[rng.IntN(6)] {
		all = append(all, genLimit(rng, "x"))
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	shortest := time.Duration(1<<63 - 1)
	for i := range all {
		if slowLimit(all[i]) {
			shortest = min(shortest, all[i].l.Spec().Window)
		}
		name := fmt.Sprintf("a%d", i)
		all[i] = dlimit{all[i].l.Named(name), trimNamed(all[i].code) + fmt.Sprintf(".Named(%q)", name)}
	}
	lead := time.Duration(rng.Int64N(int64(min(2*shortest, 3*time.Hour)) + 1))
	lead = lead.Truncate([]time.Duration{time.Second, ms, time.Microsecond}[rng.IntN(3)])
	return withPart(rng, all), a.at.Add(-lead)
}

// trimNamed drops the .Named("x") genLimit put on a code.
func trimNamed(code string) string {
	return strings.TrimSuffix(code, `.Named("x")`)
}

// withPart returns sets: all, and sometimes a random part of it in a
// random order (as genSets).
func withPart(rng *rand.Rand, all []dlimit) [][]dlimit {
	sets := [][]dlimit{all}
	if n := len(all); n > 1 && rng.IntN(3) == 0 {
		part := append([]dlimit(nil), all...)
		rng.Shuffle(len(part), func(i, j int) { part[i], part[j] = part[j], part[i] })
		sets = append(sets, part[:1+rng.IntN(n)])
	}
	return sets
}

// calPeriodOf returns the period of a calendar limit that holds now (the
// product's arithmetic: the steps aim with it; the oracle checks it).
func calPeriodOf(l ratekit.Limit, now time.Time) (start, end time.Time) {
	d, err := storetest.Peek(context.Background(), memstore.New(memstore.WithClock(func() time.Time { return now })), "k", []ratekit.Limit{l})
	if err != nil {
		panic(err)
	}
	return time.Time{}, periodEnd(now, d.EffectiveWindow)
}

// calStep returns a clock step of a calendar sequence: to the end of the
// current period of one of its slow limits (exactly, ±1 µs, ±1 ms), a part
// of the shortest one's usual length (up to a third of it) or of that
// limit's, that length exactly (±1 µs: an hour on a 23-hour day), a span of
// the last decision (a period's end, a block's), or past the period's end
// by up to half a period.
func (r *diffRun) calStep() time.Duration {
	rng := r.rng
	l := r.slow[rng.IntN(len(r.slow))]
	now := r.clock.Now()
	_, end := calPeriodOf(l, now)
	unit := l.Spec().Window
	if rng.IntN(3) > 0 {
		unit = r.shortest
	}
	var d time.Duration
	switch k := rng.IntN(100); {
	case k < 30:
		d = end.Sub(now) + []time.Duration{0, 0, 0, -time.Microsecond, time.Microsecond, -ms, ms}[rng.IntN(7)]
	case k < 70:
		d = time.Duration(rng.Int64N(int64(unit/3) + 1))
		d = d.Truncate([]time.Duration{time.Second, ms, time.Microsecond}[rng.IntN(3)])
	case k < 80:
		d = unit + []time.Duration{0, 0, -time.Microsecond, time.Microsecond}[rng.IntN(4)]
	case k < 92 && len(r.last) > 0:
		d = r.last[rng.IntN(len(r.last))] + []time.Duration{0, 0, -time.Microsecond, time.Microsecond}[rng.IntN(4)]
	default:
		d = end.Sub(now) + time.Duration(rng.Int64N(int64(unit/2)+1)).Truncate(ms)
	}
	return max(d, 0)
}

// periodLabel returns the wall clock of t in loc cut to period p (its
// minute, hour, day, the first day of its week, month or year), as a UTC
// time.
func periodLabel(p calendar.Period, loc *time.Location, t time.Time) time.Time {
	w := t.In(loc)
	y, m, d := w.Date()
	switch p {
	case calendar.Minute:
		return time.Date(y, m, d, w.Hour(), w.Minute(), 0, 0, time.UTC)
	case calendar.Hour:
		return time.Date(y, m, d, w.Hour(), 0, 0, 0, time.UTC)
	case calendar.Day:
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case calendar.Month:
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	case calendar.Year:
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	first := time.Monday
	for wd := time.Sunday; wd <= time.Saturday; wd++ {
		if calendar.WeekFrom(wd) == calendar.Period(p) {
			first = wd
		}
	}
	return time.Date(y, m, d-int((7+w.Weekday()-first)%7), 0, 0, 0, 0, time.UTC)
}

// checkPeriodEnd checks, from the definition, that end is when the period
// of a calendar limit l that holds now ends: an aligned window's next
// multiple of the window since the epoch; a period's first instant after
// now at which the zone's clock, cut to the unit, shows another value. The
// cut clock only moves forward between two changes of the zone's offset,
// so it stays the same from now to end if it shows the same at now, just
// before end, and on both sides of every offset change between them.
func checkPeriodEnd(l ratekit.Limit, now, end time.Time) error {
	sp := l.Spec()
	if !end.After(now) {
		return fmt.Errorf("%s: the period at %s ends at %s, not after it", l.Name(), now.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano))
	}
	if sp.Location == nil { // calendar.Every: aligned windows
		w := sp.Window.Microseconds()
		if e := end.UnixMicro(); e%w != 0 || e-w > now.UnixMicro() {
			return fmt.Errorf("%s: the aligned window at %s ends at %s", l.Name(), now.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano))
		}
		return nil
	}
	loc, lb := sp.Location, periodLabel(sp.Period, sp.Location, now)
	bad := func(what string, at time.Time) error {
		return fmt.Errorf("%s: the %s period at %s (%s) said to end at %s: the clock cut to its unit shows %s %s, at %s",
			l.Name(), sp.Period, now.In(loc).Format(time.RFC3339Nano), lb.Format("2006-01-02T15:04"), end.In(loc).Format(time.RFC3339Nano),
			periodLabel(sp.Period, loc, at).Format("2006-01-02T15:04"), what, at.In(loc).Format(time.RFC3339Nano))
	}
	if !periodLabel(sp.Period, loc, end.Add(-time.Microsecond)).Equal(lb) {
		return bad("before its end", end.Add(-time.Microsecond))
	}
	if periodLabel(sp.Period, loc, end).Equal(lb) {
		return bad("still at its end", end)
	}
	for _, tr := range zoneChanges(loc, now, end) {
		if !periodLabel(sp.Period, loc, tr.Add(-time.Microsecond)).Equal(lb) || !periodLabel(sp.Period, loc, tr).Equal(lb) {
			return bad("around an offset change", tr)
		}
	}
	return nil
}

// periodEnd returns the end of the period a calendar limit's effective
// window ew reports at now: ew counts from now's millisecond, as PTTL does.
func periodEnd(now time.Time, ew time.Duration) time.Time {
	return time.UnixMilli(now.UnixMilli()).Add(ew)
}

// checkPeriods checks with checkPeriodEnd the period ends that memstore's
// decision d about set reports at now: each Calendar limit's (and aligned
// window's) effective window, unless blocked, and in a receipt each one's
// end where it holds a charge.
func checkPeriods(set []dlimit, d ratekit.Decision, now time.Time) (out []string) {
	for i, st := range statesOf(d) {
		if i < len(set) && set[i].l.Spec().Algorithm == "calendar" && !st.Blocked {
			if err := checkPeriodEnd(set[i].l, now, periodEnd(now, st.EffectiveWindow)); err != nil {
				out = append(out, "period oracle: EffectiveWindow: "+err.Error())
			}
		}
	}
	if rc := d.Receipt; rc != nil && len(rc.Ends) == len(set) {
		for i, x := range set {
			if x.l.Spec().Algorithm == "calendar" && rc.Held[i] > 0 {
				if err := checkPeriodEnd(x.l, time.UnixMicro(rc.At), time.UnixMicro(rc.Ends[i])); err != nil {
					out = append(out, fmt.Sprintf("period oracle: Receipt.Ends[%d]: %v", i, err))
				}
			}
		}
	}
	return out
}

// calStats are the counts of the calendar steps of a run.
type calStats struct {
	sequences int // calendar sequences
	steps     int // steps whose set holds a Calendar limit or an aligned window
	crossed   int // steps whose clock step ended a calendar limit's period
	dst       int // steps whose clock step passed a change of a calendar limit's zone's offset (DST)
	late      int // settles of a receipt whose calendar period had ended
}

func (s *calStats) add(o calStats) {
	s.sequences += o.sequences
	s.steps += o.steps
	s.crossed += o.crossed
	s.dst += o.dst
	s.late += o.late
}

// count adds step o, played after the clock moved from before, to r's
// counts.
func (r *diffRun) count(o dop, before time.Time) {
	now := r.clock.Now()
	for _, d := range r.sets[o.set] {
		if d.l.Spec().Algorithm == "calendar" {
			r.stats.steps++
			break
		}
	}
	crossed, dst := false, false
	for _, d := range r.sets[0] {
		sp := d.l.Spec()
		if sp.Algorithm != "calendar" {
			continue
		}
		if _, end := calPeriodOf(d.l, before); !end.After(now) {
			crossed = true
		}
		if sp.Location != nil {
			for _, tr := range zoneChanges(sp.Location, before, now.Add(time.Microsecond)) {
				_, was := tr.Add(-time.Second).In(sp.Location).Zone()
				_, is := tr.In(sp.Location).Zone()
				dst = dst || was != is
			}
		}
	}
	if crossed {
		r.stats.crossed++
	}
	if dst {
		r.stats.dst++
	}
	if (o.kind == opSettle || o.kind == opRelease) && o.rc < len(r.pool) {
		p := r.pool[o.rc]
		for i, d := range r.sets[p.set] {
			if d.l.Spec().Algorithm == "calendar" && p.mem.Held[i] > 0 && p.mem.Ends[i] <= now.UnixMicro() {
				r.stats.late++
				break
			}
		}
	}
}
