// Package calendar names the periods of ratekit.Calendar limits: the units
// of the calendar in a time zone (Minute ... Year, weeks from any day) and
// windows aligned to the clock (Every).
//
//	daily := ratekit.Calendar(1_000, calendar.Day, nyc)          // resets at midnight in New York
//	monthly := ratekit.Calendar(10_000, calendar.Month, nyc)     // on the 1st
//	clock := ratekit.Calendar(100, calendar.Every(time.Minute), nil) // on the clock's minutes
package calendar

import (
	"strings"
	"time"
)

// A Period is a period of ratekit.Calendar limits. The zero Period is
// invalid. Periods are plain values, safe to copy and compare.
type Period string

// The units of the calendar. A period starts when the zone's clock first
// shows it and ends when it first shows the next one: a day of a DST change
// has 23 or 25 hours, and an hour the clocks repeat is one of two hours.
const (
	Minute Period = "minute"
	Hour   Period = "hour"
	Day    Period = "day"
	Week   Period = "week" // from Monday at midnight, as ISO weeks
	Month  Period = "month"
	Year   Period = "year"
)

// WeekFrom returns the Period of weeks that start at midnight on day.
func WeekFrom(day time.Weekday) Period {
	switch day {
	case time.Sunday:
		return "week-sunday"
	case time.Monday:
		return Week
	case time.Tuesday:
		return "week-tuesday"
	case time.Wednesday:
		return "week-wednesday"
	case time.Thursday:
		return "week-thursday"
	case time.Friday:
		return "week-friday"
	case time.Saturday:
		return "week-saturday"
	}
	return Period("week-" + day.String()) // invalid: ratekit.New says so
}

// everyPrefix starts the Period of windows aligned to the clock.
const everyPrefix = "every "

// Every returns the Period of windows of length d aligned to the clock:
// they start at multiples of d since the Unix epoch (every minute on the
// minute, every 10 s at :00, :10, ...), alike in every instance and zone.
// d must be whole milliseconds, from 1 ms to 366 days.
func Every(d time.Duration) Period { return Period(everyPrefix + d.String()) }

// Window returns the length of an Every period, and whether p is one.
func (p Period) Window() (time.Duration, bool) {
	s, ok := strings.CutPrefix(string(p), everyPrefix)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}
