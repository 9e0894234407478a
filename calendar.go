package ratekit

import (
	"time"

	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/internal/algo"
)

// Calendar allows quota requests (or cost units) per period of the calendar
// in the time zone loc (nil: UTC): Calendar(10_000, calendar.Month, loc)
// resets at midnight on the 1st of every month in loc. A period starts when
// loc's clock first shows it and ends when the clock first shows the next
// one, so a day of a DST change has 23 or 25 hours, and when clocks go back
// an hour the hour they repeat is one period of two hours. With
// calendar.Every(d) the periods are windows of d aligned to the clock, and
// loc is not used. Periods are decided on the store's clock (Redis's own for
// the Redis stores): a period's first request passes at its boundary's
// microsecond, and Retry-After and the headers count to the period's end
// (the Decision to the millisecond, rounded up, as a fixed window's).
//
// loc must name its zone (time.LoadLocation, or time.UTC): time.Local is
// refused, since it differs between machines. Its name, with the period, is
// part of the storage key. Programs that may run where no zone database is
// installed import time/tzdata.
func Calendar(quota int64, period calendar.Period, loc *time.Location) Limit {
	c := newDef(algo.Calendar, quota, float64(quota), 0)
	c.Period, c.Location = period, loc
	if _, every := period.Window(); every {
		c.Location = nil
	} else if loc == nil {
		c.Location = time.UTC
	}
	return c.limit()
}
