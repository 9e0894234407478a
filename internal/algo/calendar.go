package algo

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ratekit/ratekit/calendar"
)

// Calendar counts requests per period of the calendar in a time zone, or
// per window aligned to the Unix epoch (a calendar.Every period, whose
// Location is nil); a call counts in the period that holds the store's clock.
const Calendar = "calendar"

// periodic keeps the period it found last, so that the calls of one limit
// (memstore holds one per prepared limit) look the zone's rules up
// once per period: BenchmarkTake/calendar in store/memstore.
type periodic struct {
	base
	last atomic.Pointer[found]
}

// found is a period PeriodOf found, with what of the Spec it depends on.
type found struct {
	period     calendar.Period
	loc        *time.Location
	window     time.Duration
	start, end int64
}

// periodOf is PeriodOf, from the period found last when it holds now.
func (c *periodic) periodOf(s *Spec, now int64) (int64, int64) {
	if f := c.last.Load(); f != nil && f.start <= now && now < f.end && f.loc == s.Location && f.period == s.Period && f.window == s.Window {
		return f.start, f.end
	}
	start, end := PeriodOf(s, now)
	c.last.Store(&found{s.Period, s.Location, s.Window, start, end})
	return start, end
}

func (*periodic) Caps() Caps { return Cacheable | Leasable | SettlesAtReset | EndsOnMS }

func (*periodic) Validate(s *Spec, _ bool) Fault {
	var c check
	c.modifiers(s, takes{})
	c.count("quota", s.Quota)
	if _, every := s.Period.Window(); every {
		c.window("period", s.Window)
		return c.Fault
	}
	_, _, ok := unit(s.Period)
	c.fail(!ok, "period", "must be calendar.Minute, Hour, Day, Week, Month, Year, WeekFrom(a weekday) or Every(a duration) (got %q)", s.Period)
	c.fail(s.Location == time.Local, "location", "time.Local differs from machine to machine; name the zone with time.LoadLocation")
	return c.Fault
}

// Derive sets the Window: an Every period's length, or a calendar unit's
// usual length (a month's is 30 days), which describes it where a length
// is wanted.
func (*periodic) Derive(s *Spec) {
	if d, every := s.Period.Window(); every {
		s.Window = d
	} else if n, _, ok := unit(s.Period); ok {
		s.Window = n
	}
}

func (*periodic) Describe(s *Spec) string {
	if s.Location == nil {
		return fmt.Sprintf("%s: %s %d per %s aligned to the clock", s.Name, s.Algorithm, s.Quota, s.Window)
	}
	return fmt.Sprintf("%s: %s %d per %s in %s", s.Name, s.Algorithm, s.Quota, s.Period, s.Location)
}

// Args: the quota and the start and end (ms) of the period the engine
// sends for a call the application makes at now (its estimate of Redis's
// clock): now's period, or the next one from half a margin before its end.
// Redis decides in the period that holds its own time, which it can do
// from these bounds while its time is from a margin before the start
// (then in the period before, which ends at the start) to the end: so an
// instance whose clock is up to half a margin (1 s) from Redis's never
// sends bounds Redis must refuse (lua/calendar.lua, stale).
// Shape: the period and zone, which say what the count counts.
func (*periodic) Shape(s *Spec) string { return fmt.Sprintf("%s|%s", s.Period, s.Location) }

func (*periodic) Args(s *Spec, now int64) [3]int64 {
	start, end, _, _ := sent(s, now)
	return [3]int64{s.Quota, start / 1000, end / 1000}
}

// Period: the stretch of the application's time over which Args sends one
// period.
func (*periodic) Period(s *Spec, now int64) (int64, int64) {
	_, _, from, until := sent(s, now)
	return from, until
}

// sent returns the period Args sends for a call at now, [start, end), and
// the stretch of now [from, until) that sends it.
func sent(s *Spec, now int64) (start, end, from, until int64) {
	start, end = PeriodOf(s, now)
	switchAt := end - Margin(start, end)/2
	if now < switchAt {
		return start, end, start, switchAt
	}
	next, nextEnd := PeriodOf(s, end)
	return next, nextEnd, switchAt, end
}

// Margin returns how long before a period [start, end) (µs) Redis's clock
// may be and still be decided from its bounds: 2 s, or half the period if
// shorter (an aligned window of under 4 s). lua/calendar.lua computes it
// alike, in ms.
func Margin(start, end int64) int64 { return min(2_000, (end-start)/1000/2) * 1000 }

// Header: the quota, and for a calendar period no window here: its length
// varies, so the headers give the length of the period a decision counted in.
func (*periodic) Header(s *Spec) (int64, time.Duration) {
	if s.Location != nil {
		return s.Quota, 0
	}
	return s.Quota, s.Window
}

// Decide: see lua/calendar.lua in store/redisengine. A calendar limit is a
// fixed window whose windows are its periods: a new window ends with the
// period that holds now. The effective window is the time to its end.
func (k *periodic) Decide(s *Spec, e *State, c Call, r *Result, next *State) {
	_, end := k.periodOf(s, c.Now)
	counter(s.Quota, end/1000, e, c, r, next)
	r.EffectiveWindow = ms(next.ExpireMS - c.Now/1000)
}

// End, GiveBack: as a fixed window's; a counter is the charged one when it
// ends within near of the receipt's end.
func (*periodic) End(_ *Spec, next *State, _ int64) int64 { return next.ExpireMS * 1000 }

func (*periodic) GiveBack(s *Spec, e *State, end *int64, n, now int64) {
	giveBack(e, *end, n, now, near(s))
}

// Extra adds n to the live window, else starts one for the current period.
func (k *periodic) Extra(s *Spec, e *State, end, held, n, now int64) (State, int64, int64) {
	_, cur := k.periodOf(s, now)
	return extra(e, end, held, n, now, cur/1000, near(s))
}

// near is how close (µs) a counter's end must be to a receipt's to be the
// charged one's: 1 s, or half an aligned window if shorter; two periods' ends
// are further apart (a Chatham hour can last 15 minutes). lua/calendar.lua
// computes it alike.
func near(s *Spec) int64 { return min(1_000_000, s.Window.Microseconds()/2) }

// PeriodOf returns the period of s that holds now, [start, end) in µs. A
// calendar period starts when the zone's clock, cut to the period's unit
// (its minute, hour, day, the first day of its week, month or year), first
// shows a new value, and ends when it next does: a day of a DST change has
// 23 or 25 hours, and when clocks go back an hour the hour they repeat is one
// period of two hours.
func PeriodOf(s *Spec, now int64) (start, end int64) {
	if s.Location == nil {
		w := s.Window.Microseconds()
		start = now - (now%w+w)%w
		return start, start + w
	}
	_, first, _ := unit(s.Period)
	t := time.UnixMicro(now).In(s.Location)
	label := cut(t, s.Period, first)
	return periodStart(t, label, s.Period, first).UnixMicro(), periodEnd(t, label, s.Period, first).UnixMicro()
}

// cut returns the wall clock of t cut to the period's unit, as a UTC time.
func cut(t time.Time, period calendar.Period, first time.Weekday) time.Time {
	y, mo, d := t.Date()
	h, mi, _ := t.Clock()
	switch period {
	case calendar.Minute:
		return time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
	case calendar.Hour:
		return time.Date(y, mo, d, h, 0, 0, 0, time.UTC)
	case calendar.Month:
		return time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
	case calendar.Year:
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	day := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	if period == calendar.Day {
		return day
	}
	return day.AddDate(0, 0, -int((7+t.Weekday()-first)%7))
}

// next returns the wall clock at which the period after label starts.
func next(label time.Time, period calendar.Period) time.Time {
	switch period {
	case calendar.Minute:
		return label.Add(time.Minute)
	case calendar.Hour:
		return label.Add(time.Hour)
	case calendar.Day:
		return label.AddDate(0, 0, 1)
	case calendar.Month:
		return label.AddDate(0, 1, 0)
	case calendar.Year:
		return label.AddDate(1, 0, 0)
	}
	return label.AddDate(0, 0, 7)
}

// at returns the instant at which a clock at offset (seconds) shows wall.
func at(wall time.Time, offset int) time.Time {
	return wall.Add(-time.Duration(offset) * time.Second)
}

// periodStart returns when the clock first showed label in the stretch
// that holds t: within t's zone span when it shows label there, else at the
// span's start, unless the span before showed label too (clocks went back
// within the period), where the search goes on.
func periodStart(t, label time.Time, period calendar.Period, first time.Weekday) time.Time {
	for range 64 { // zone spans of one period: a few at most
		_, offset := t.Zone()
		from, _ := t.ZoneBounds()
		s := at(label, offset)
		if from.IsZero() || !s.Before(from) && !s.Equal(from) {
			return s
		}
		before := from.Add(-time.Nanosecond)
		if !cut(before, period, first).Equal(label) {
			return maxTime(s, from)
		}
		t = before
	}
	return t
}

// periodEnd returns when the clock next shows a value other than label
// after t: the start of the next period within t's zone span, else the
// span's end, unless the clock shows label still after it.
func periodEnd(t, label time.Time, period calendar.Period, first time.Weekday) time.Time {
	wall := next(label, period)
	for range 64 {
		_, offset := t.Zone()
		_, to := t.ZoneBounds()
		if !to.IsZero() && !to.After(t) {
			// Go (1.26) ends the span of the last UTC day of a leap year
			// after 2037, in zones with DST, at that day's start, before t;
			// the offset holds until the year's end there.
			to = time.Date(t.UTC().Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		e := at(wall, offset)
		if to.IsZero() || e.Before(to) {
			return e
		}
		if !cut(to.In(t.Location()), period, first).Equal(label) {
			return to
		}
		t = to.In(t.Location())
	}
	return t
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// unit returns a calendar unit's usual length and the first day of its
// weeks, or reports that period names none.
func unit(period calendar.Period) (time.Duration, time.Weekday, bool) {
	switch period {
	case calendar.Minute:
		return time.Minute, time.Monday, true
	case calendar.Hour:
		return time.Hour, time.Monday, true
	case calendar.Day:
		return 24 * time.Hour, time.Monday, true
	case calendar.Month:
		return 30 * 24 * time.Hour, time.Monday, true
	case calendar.Year:
		return 365 * 24 * time.Hour, time.Monday, true
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if period == calendar.WeekFrom(d) {
			return 7 * 24 * time.Hour, d, true
		}
	}
	return 0, 0, false
}
