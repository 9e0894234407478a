package algo

import (
	"math/rand/v2"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, on machines without a zone database

	"github.com/ratekit/ratekit/calendar"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Periods worked out by hand from each zone's rules: DST days of 23, 23.5,
// 24.5 and 25 hours, hours of 30 and 90 minutes and of two hours, offsets
// of +05:45 and +12:45/+13:45, a skipped day, month and year ends, ISO
// week 53.
func TestPeriodOf(t *testing.T) {
	cases := []struct {
		zone           string
		period         calendar.Period
		at, start, end string
	}{
		{"America/New_York", calendar.Day, "2026-03-08T12:00:00Z", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"},
		{"America/New_York", calendar.Day, "2026-11-01T12:00:00Z", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"},
		{"America/New_York", calendar.Hour, "2026-11-01T05:30:00Z", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"},
		{"America/New_York", calendar.Hour, "2026-11-01T06:59:59Z", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"},
		{"America/New_York", calendar.Hour, "2026-03-08T06:30:00Z", "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"},
		{"America/New_York", calendar.Hour, "2026-03-08T07:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"},
		{"America/New_York", calendar.Minute, "2026-11-01T06:00:30Z", "2026-11-01T06:00:00Z", "2026-11-01T06:01:00Z"},
		{"America/New_York", calendar.Year, "2026-06-01T00:00:00Z", "2026-01-01T05:00:00Z", "2027-01-01T05:00:00Z"},
		{"Australia/Lord_Howe", calendar.Day, "2026-10-04T00:00:00Z", "2026-10-03T13:30:00Z", "2026-10-04T13:00:00Z"},
		{"Australia/Lord_Howe", calendar.Hour, "2026-10-03T15:45:00Z", "2026-10-03T15:30:00Z", "2026-10-03T16:00:00Z"},
		{"Australia/Lord_Howe", calendar.Hour, "2026-10-03T15:29:00Z", "2026-10-03T14:30:00Z", "2026-10-03T15:30:00Z"},
		{"Australia/Lord_Howe", calendar.Day, "2026-04-05T00:00:00Z", "2026-04-04T13:00:00Z", "2026-04-05T13:30:00Z"},
		{"Australia/Lord_Howe", calendar.Hour, "2026-04-04T15:10:00Z", "2026-04-04T14:00:00Z", "2026-04-04T15:30:00Z"},
		{"Asia/Kathmandu", calendar.Day, "2026-05-10T00:00:00Z", "2026-05-09T18:15:00Z", "2026-05-10T18:15:00Z"},
		{"Asia/Kathmandu", calendar.Hour, "2026-05-10T00:00:00Z", "2026-05-09T23:15:00Z", "2026-05-10T00:15:00Z"},
		{"Pacific/Chatham", calendar.Day, "2026-04-05T00:00:00Z", "2026-04-04T10:15:00Z", "2026-04-05T11:15:00Z"},
		{"Pacific/Chatham", calendar.Day, "2026-09-27T00:00:00Z", "2026-09-26T11:15:00Z", "2026-09-27T10:15:00Z"},
		{"Pacific/Chatham", calendar.Month, "2026-09-27T00:00:00Z", "2026-08-31T11:15:00Z", "2026-09-30T10:15:00Z"},
		{"Pacific/Apia", calendar.Day, "2026-06-01T00:00:00Z", "2026-05-31T11:00:00Z", "2026-06-01T11:00:00Z"},
		{"Pacific/Apia", calendar.Day, "2011-12-30T09:00:00Z", "2011-12-29T10:00:00Z", "2011-12-30T10:00:00Z"}, // Dec 30 never came
		{"Pacific/Apia", calendar.Day, "2011-12-30T10:00:00Z", "2011-12-30T10:00:00Z", "2011-12-31T10:00:00Z"},
		{"Europe/London", calendar.Day, "2026-03-29T12:00:00Z", "2026-03-29T00:00:00Z", "2026-03-29T23:00:00Z"},
		{"Europe/London", calendar.Day, "2026-10-25T12:00:00Z", "2026-10-24T23:00:00Z", "2026-10-26T00:00:00Z"},
		{"Europe/London", calendar.Week, "2026-10-25T12:00:00Z", "2026-10-18T23:00:00Z", "2026-10-26T00:00:00Z"},
		{"UTC", calendar.Month, "2026-01-31T23:59:59Z", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"},
		{"UTC", calendar.Month, "2028-02-29T12:00:00Z", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"},
		{"UTC", calendar.Day, "2028-02-29T12:00:00Z", "2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z"},
		{"UTC", calendar.Week, "2027-01-03T23:59:59Z", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"}, // ISO week 53 of 2026
		{"UTC", calendar.WeekFrom(time.Sunday), "2026-12-30T00:00:00Z", "2026-12-27T00:00:00Z", "2027-01-03T00:00:00Z"},
		{"UTC", calendar.Year, "2026-12-31T23:59:59Z", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"UTC", calendar.Year, "2027-01-01T00:00:00Z", "2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"},
		// the last UTC day of a leap year past the zones' explicit transitions
		{"America/New_York", calendar.Day, "2040-12-31T11:59:59Z", "2040-12-31T05:00:00Z", "2041-01-01T05:00:00Z"},
		{"Europe/London", calendar.Year, "2040-06-01T00:00:00Z", "2040-01-01T00:00:00Z", "2041-01-01T00:00:00Z"},
	}
	for _, c := range cases {
		s := Spec{Period: c.period, Location: zone(t, c.zone)}
		start, end := PeriodOf(&s, utc(c.at).UnixMicro())
		if start != utc(c.start).UnixMicro() || end != utc(c.end).UnixMicro() {
			t.Errorf("%s %s at %s: [%s, %s), want [%s, %s)", c.zone, c.period, c.at,
				time.UnixMicro(start).UTC().Format(time.RFC3339), time.UnixMicro(end).UTC().Format(time.RFC3339), c.start, c.end)
		}
	}
}

// Aligned windows lie on multiples of the window since the Unix epoch.
func TestPeriodOfAligned(t *testing.T) {
	s := Spec{Window: 10 * time.Second}
	for _, c := range []struct{ now, start int64 }{{1_234_567_890, 1_230_000_000}, {1_230_000_000, 1_230_000_000}, {-1, -10_000_000}} {
		if start, end := PeriodOf(&s, c.now); start != c.start || end != c.start+10_000_000 {
			t.Errorf("at %d: [%d, %d), want [%d, +10 s)", c.now, start, end, c.start)
		}
	}
}

// At random instants in every zone above, the period holds the instant,
// the clock shows its value from its start up to its end and another one at
// its end, and its neighbours meet it.
func TestPeriodOfRandom(t *testing.T) {
	zones := []string{"America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham", "Pacific/Apia", "Europe/London", "UTC"}
	periods := []calendar.Period{calendar.Minute, calendar.Hour, calendar.Day, calendar.Week, calendar.WeekFrom(time.Sunday), calendar.Month, calendar.Year}
	r := rand.New(rand.NewPCG(1, 2))
	from, to := utc("2010-01-01T00:00:00Z").UnixMicro(), utc("2050-01-01T00:00:00Z").UnixMicro()
	for range 40_000 {
		s := Spec{Period: periods[r.IntN(len(periods))], Location: zone(t, zones[r.IntN(len(zones))])}
		_, first, _ := unit(s.Period)
		now := from + r.Int64N(to-from)
		start, end := PeriodOf(&s, now)
		label := func(us int64) time.Time { return cut(time.UnixMicro(us).In(s.Location), s.Period, first) }
		ok := start <= now && now < end && label(start).Equal(label(now)) && label(end-1).Equal(label(now)) &&
			!label(end).Equal(label(now)) && !label(start-1).Equal(label(now))
		if s2, e2 := PeriodOf(&s, end); s2 != end || e2 <= end {
			ok = false
		}
		if s0, e0 := PeriodOf(&s, start-1); e0 != start || s0 >= start {
			ok = false
		}
		if !ok {
			t.Fatalf("%s %s at %s: [%s, %s)", s.Location, s.Period, time.UnixMicro(now).UTC(), time.UnixMicro(start).UTC(), time.UnixMicro(end).UTC())
		}
	}
}

// The bounds sent for a call let Redis decide in the period that holds its
// own time, as PeriodOf does, while its clock is within half a margin (1 s)
// of the application's, and Period says how long they are sent.
func TestArgsCoverRedisClock(t *testing.T) {
	zones := []string{"America/New_York", "Australia/Lord_Howe", "Pacific/Chatham", "UTC"}
	periods := []calendar.Period{"", calendar.Minute, calendar.Hour, calendar.Day, calendar.Month}
	r := rand.New(rand.NewPCG(3, 4))
	from, to := utc("2026-01-01T00:00:00Z").UnixMicro(), utc("2027-01-01T00:00:00Z").UnixMicro()
	c := &periodic{}
	for range 20_000 {
		s := Spec{Period: periods[r.IntN(len(periods))], Location: zone(t, zones[r.IntN(len(zones))]), Window: time.Duration(1+r.IntN(5000)) * time.Millisecond}
		if s.Period == "" { // windows aligned to the clock
			s.Period, s.Location = calendar.Every(s.Window), nil
		}
		now := from + r.Int64N(to-from)
		if r.IntN(2) == 0 { // near a boundary
			_, end := PeriodOf(&s, now)
			now = end - 3_000_000 + r.Int64N(6_000_000)
		}
		args := c.Args(&s, now)
		start, end := args[1]*1000, args[2]*1000
		half := Margin(start, end) / 2
		redis := now - half + r.Int64N(2*half+1)
		if redis < start-Margin(start, end) || redis >= end {
			t.Fatalf("%s %q at %d: Redis at %d is outside [%d - margin, %d)", s.Location, s.Period, now, redis, start, end)
		}
		want := end
		if redis < start {
			want = start
		}
		if _, e := PeriodOf(&s, redis); e != want {
			t.Fatalf("%s %q at %d, Redis at %d: period ends %d, Redis would count in one ending %d", s.Location, s.Period, now, redis, e, want)
		}
		if f, u := c.Period(&s, now); now < f || now >= u || c.Args(&s, f) != args || c.Args(&s, u-1) != args {
			t.Fatalf("%s %q at %d: Period [%d, %d) does not send %v throughout", s.Location, s.Period, now, f, u, args)
		}
	}
}
