package storetest

import (
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
)

// A period is one Calendar case: a limit and, worked out by hand from its
// zone's rules, the period that starts at start and ends at end, and the
// next one's end.
type period struct {
	name            string
	zone            string // "" for an aligned window
	period          calendar.Period
	start, end, nxt string
}

// periods are the calendar cases: DST days of 23, 23.5 and 25 hours, an
// hour of two hours and one of 30 minutes, offsets of +05:45 and +12:45,
// month and year ends, February 29 of 2028, ISO week 53 of 2026.
var periods = []period{
	{"NewYork23h", "America/New_York", calendar.Day, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", "2026-03-10T04:00:00Z"},
	{"NewYork25h", "America/New_York", calendar.Day, "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z", "2026-11-03T05:00:00Z"},
	{"NewYorkRepeatedHour", "America/New_York", calendar.Hour, "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"},
	{"LordHowe23h30", "Australia/Lord_Howe", calendar.Day, "2026-10-03T13:30:00Z", "2026-10-04T13:00:00Z", "2026-10-05T13:00:00Z"},
	{"LordHoweHalfHour", "Australia/Lord_Howe", calendar.Hour, "2026-10-03T15:30:00Z", "2026-10-03T16:00:00Z", "2026-10-03T17:00:00Z"},
	{"Kathmandu", "Asia/Kathmandu", calendar.Day, "2026-05-09T18:15:00Z", "2026-05-10T18:15:00Z", "2026-05-11T18:15:00Z"},
	{"KathmanduHour", "Asia/Kathmandu", calendar.Hour, "2026-05-09T23:15:00Z", "2026-05-10T00:15:00Z", "2026-05-10T01:15:00Z"},
	{"Chatham25h", "Pacific/Chatham", calendar.Day, "2026-04-04T10:15:00Z", "2026-04-05T11:15:00Z", "2026-04-06T11:15:00Z"},
	{"Apia", "Pacific/Apia", calendar.Day, "2026-05-31T11:00:00Z", "2026-06-01T11:00:00Z", "2026-06-02T11:00:00Z"},
	{"London25h", "Europe/London", calendar.Day, "2026-10-24T23:00:00Z", "2026-10-26T00:00:00Z", "2026-10-27T00:00:00Z"},
	{"January", "UTC", calendar.Month, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"},
	{"February2028", "UTC", calendar.Month, "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z", "2028-04-01T00:00:00Z"},
	{"Leap day", "UTC", calendar.Day, "2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z", "2028-03-02T00:00:00Z"},
	{"ISOWeek53", "UTC", calendar.Week, "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z", "2027-01-11T00:00:00Z"},
	{"SundayWeek", "UTC", calendar.WeekFrom(time.Sunday), "2026-12-27T00:00:00Z", "2027-01-03T00:00:00Z", "2027-01-10T00:00:00Z"},
	{"YearEnd", "America/New_York", calendar.Year, "2026-01-01T05:00:00Z", "2027-01-01T05:00:00Z", "2028-01-01T05:00:00Z"},
	{"Aligned10s", "", "", "2026-11-28T10:00:10Z", "2026-11-28T10:00:20Z", "2026-11-28T10:00:30Z"},
}

func (p period) limit(t *testing.T, quota int64) ratekit.Limit {
	if p.zone == "" {
		return ratekit.Calendar(quota, calendar.Every(10*time.Second), nil)
	}
	loc, err := time.LoadLocation(p.zone)
	if err != nil {
		t.Fatalf("zone %s: %v (import time/tzdata)", p.zone, err)
	}
	return ratekit.Calendar(quota, p.period, loc)
}

func instant(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// RunCalendar runs the cases of Calendar limits and aligned windows on a
// store on a fake clock: newHarness returns a fresh, empty store whose clock
// starts at start. The quota is exact in each period, a period's first
// request passes at its boundary's microsecond and not one before, and
// Retry-After, the reset and the effective window count to the period's
// end, to the millisecond (rounded up, as a fixed window's).
func RunCalendar(t *testing.T, newHarness func(t *testing.T, start time.Time) Harness) {
	for _, p := range periods {
		t.Run(p.name, func(t *testing.T) {
			start, end, nxt := instant(p.start), instant(p.end), instant(p.nxt)
			h := newHarness(t, start.Add(-time.Microsecond))
			l := p.limit(t, 3)
			// the period before: full, its denial waits to its end, rounded
			// up to the ms (as PTTL reads it); the next request passes at the
			// boundary's µs
			for range 3 {
				take(t, h, "k", 1, l)
			}
			if d := take(t, h, "k", 1, l); d.Allowed || d.RetryAfter != time.Millisecond {
				t.Fatalf("1 µs before the period, after the quota: %+v; want a denial for 1 ms", d)
			}
			h.Advance(time.Microsecond)
			periodExact(t, h, l, "the period", end.Sub(start))
			h.Advance(end.Sub(start) - time.Microsecond)
			if d := take(t, h, "k", 1, l); d.Allowed || d.RetryAfter != time.Millisecond {
				t.Fatalf("1 µs before the period's end: %+v; want a denial for 1 ms", d)
			}
			h.Advance(time.Microsecond)
			periodExact(t, h, l, "the next period", nxt.Sub(end))
		})
	}
	t.Run("AllOrNothingBesideGCRA", func(t *testing.T) {
		h := newHarness(t, instant("2026-11-28T10:00:00Z"))
		perSecond, daily := ratekit.GCRA(1, time.Second, 1).Named("second"), ratekit.Calendar(3, calendar.Day, nil).Named("daily")
		for i := range 3 {
			if d := take(t, h, "k", 1, perSecond, daily); !d.Allowed {
				t.Fatalf("request %d, a second apart: %+v", i, d)
			}
			if d := take(t, h, "k", 1, perSecond, daily); d.Allowed || len(d.States) != 2 || d.States[0].Allowed {
				t.Fatalf("request %d again at once: %+v; want the per-second limit to deny", i, d)
			}
			if r := peek(t, h, "k", daily).Remaining; r != int64(2-i) {
				t.Fatalf("after request %d and a denied one: %d left of the daily quota, want %d", i, r, 2-i)
			}
			h.Advance(time.Second)
		}
		d := take(t, h, "k", 1, perSecond, daily)
		if want := 14*time.Hour - 3*time.Second; d.Allowed || d.Limit.Name() != "daily" || d.RetryAfter != want {
			t.Fatalf("a fourth request: %+v; want the daily quota to deny for %v (no denied request charged it)", d, want)
		}
	})
	if !Settles(newHarness(t, instant(periods[0].start)).Store, periods[0].limit(t, 1)) {
		return
	}
	t.Run("SettleIntoTheChargedPeriod", func(t *testing.T) {
		start := instant("2026-11-28T23:59:59Z")
		h := newHarness(t, start)
		l := ratekit.Calendar(10, calendar.Day, nil)
		a := reserve(t, h.Store, "k", 4, l)
		b := reserve(t, h.Store, "k", 4, l)
		settle(t, h.Store, "k", a, 1, l) // a refund in its own period
		if r := peek(t, h, "k", l).Remaining; r != 5 {
			t.Fatalf("4 + 4 charged, the first settled to 1: remaining %d, want 5", r)
		}
		h.Advance(time.Second) // the next day
		take(t, h, "k", 2, l)
		settle(t, h.Store, "k", b, 0, l) // the charged period has ended: nothing to give back
		if r := peek(t, h, "k", l).Remaining; r != 8 {
			t.Fatalf("a refund of yesterday's charge: remaining %d, want 8 (today's 2 stand)", r)
		}
		settle(t, h.Store, "k", a, 3, l) // an extra charge goes to today
		if r := peek(t, h, "k", l).Remaining; r != 6 {
			t.Fatalf("yesterday's charge settled up by 2: remaining %d, want 6", r)
		}
	})
}

// periodExact checks a fresh period of length length on l (quota 3), at its
// start: three requests pass, the fourth waits exactly to its end.
func periodExact(t *testing.T, h Harness, l ratekit.Limit, what string, length time.Duration) {
	t.Helper()
	for i := range 3 {
		d := take(t, h, "k", 1, l)
		if !d.Allowed || d.Remaining != int64(2-i) || d.ResetAfter != length {
			t.Fatalf("%s, request %d at its start: %+v; want an admission, %d left, reset after %v", what, i, d, 2-i, length)
		}
	}
	d := take(t, h, "k", 1, l)
	if d.Allowed || d.RetryAfter != length || d.ResetAfter != length || d.EffectiveWindow != length {
		t.Fatalf("%s, past its quota: %+v; want a denial, retry, reset and effective window %v", what, d, length)
	}
}
