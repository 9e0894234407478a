package ratekit

import (
	"strings"
	"time"

	"github.com/ratekit/ratekit/internal/algo"
)

// A Period is a period of the calendar for Calendar limits: Minute, Hour,
// Day, Week (from Monday, as ISO weeks), Month, Year, or a week from another
// day (WeekFrom). The zero Period is invalid.
type Period string

// The periods of the calendar.
const (
	Minute Period = algo.Minute
	Hour   Period = algo.Hour
	Day    Period = algo.Day
	Week   Period = algo.Week // from Monday at midnight
	Month  Period = algo.Month
	Year   Period = algo.Year
)

// WeekFrom returns the Period of weeks that start at midnight on day.
func WeekFrom(day time.Weekday) Period {
	if day == time.Monday {
		return Week
	}
	return Period(algo.Week + "-" + strings.ToLower(day.String()))
}

// Calendar allows quota requests (or cost units) per period of the calendar
// in the time zone loc (nil: UTC): Calendar(10_000, Month, loc) resets at
// midnight on the 1st of every month in loc. A period starts when loc's
// clock first shows it and ends when the clock first shows the next one, so
// a day of a DST change has 23 or 25 hours, and when clocks go back an hour
// the hour they repeat is one period of two hours. Periods are decided on
// the store's clock (Redis's own for the Redis stores), exact to the
// microsecond; Retry-After and the headers count to the period's end.
//
// loc must name its zone (time.LoadLocation, or time.UTC): time.Local is
// refused, since it differs between machines. Its name, with the period, is
// part of the storage key. Programs that may run where no zone database is
// installed import time/tzdata.
func Calendar(quota int64, period Period, loc *time.Location) Limit {
	if loc == nil {
		loc = time.UTC
	}
	c := newDef(algo.Calendar, quota, float64(quota), 0)
	c.Period, c.Location = string(period), loc
	return c.limit()
}

// Aligned returns a copy of a FixedWindow whose windows lie on the clock:
// they start at multiples of the window since the Unix epoch (every minute
// on the minute, every 10 s at :00, :10, ...), in every instance alike,
// rather than at a subject's first request. Its algorithm is "calendar".
func (l Limit) Aligned() Limit {
	c := *l.def()
	if c.Algorithm == algo.FixedWindow {
		c.Algorithm = algo.Calendar
		if c.Name == algo.FixedWindow {
			c.Name = algo.Calendar
		}
	} else {
		c.Period = "aligned" // refused by New: no other algorithm takes it
	}
	return c.limit()
}
