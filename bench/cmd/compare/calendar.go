package main

import (
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
)

// calendarZone is the time zone of the calendar contestants: one with DST,
// so its periods go through the zone's rules, not UTC's arithmetic.
const calendarZone = "America/New_York"

// calendarLimit is fixedLimit's quota per day of calendarZone: the same
// quota, so every scenario's outcome is the same as ratekit-fixed's (all
// allowed in A, C and S; all denied in B once the warm-up spent the quota).
func calendarLimit(p Params) ratekit.Limit {
	loc, err := time.LoadLocation(calendarZone)
	if err != nil {
		panic("compare: " + err.Error()) // a zone database is installed with Go's toolchain
	}
	return ratekit.Calendar(p.Quota, calendar.Day, loc)
}

// ratekitCalendar is ratekit-fixed (same client options, store, prefix and
// subjects) with calendarLimit in place of the fixed window: the cost of a
// calendar decision against a fixed window's.
func ratekitCalendar(p Params) (*Contestant, error) {
	return ratekitWith(p, false, calendarLimit(p))
}
