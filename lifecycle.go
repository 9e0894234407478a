package ratekit

import (
	"context"
	"net/http"

	"github.com/ratekit/ratekit/internal/status"
)

// WithSettle lets handlers settle a request's real cost after the fact:
// the request is charged its cost (WithCost) as an estimate when it is
// admitted, and the handler calls ReservationFrom(r.Context()).Settle with
// the cost it found (tokens generated, bytes sent), which refunds the
// difference or charges the extra. A request whose handler does not settle
// keeps its estimate. Settling costs one store call more per request.
func WithSettle() Option {
	return optionFunc(func(c *config) { c.settle = true })
}

// WithCountIf counts a request only when counts(status) reports true for
// its response status; the charge of any other request is refunded once
// its handler returns (in one store call more). A handler that panics
// counts as status 500. For example, to count only failed logins, or to
// let server errors cost nothing:
//
//	ratekit.WithCountIf(func(status int) bool { return status < 500 })
//
// A refund never lifts a block a denial started, and gives back only what
// the charge still holds (see Reservation.Settle).
func WithCountIf(counts func(status int) bool) Option {
	return optionFunc(func(c *config) { c.countIf = counts })
}

// Reserving reports whether the Guard admits requests through
// Limiter.Reserve, so that a Verdict that passes carries a Reservation to
// Finish: its Limiter has InFlight limits, or WithSettle or WithCountIf is
// set.
func (g *Guard) Reserving() bool { return g.reserving }

// Finish ends the reservation of a request that passed Check once its
// handler has returned; status is its response status (0 when unknown,
// which counts). Under WithCountIf a status that does not count refunds the
// whole charge; the request's InFlight slots are released. The store call is
// bounded by WithTimeout and made even when ctx has ended. Finish does
// nothing for a nil Reservation.
func (g *Guard) Finish(ctx context.Context, res *Reservation, status int) error {
	if res == nil {
		return nil
	}
	// its own timeout: the request's deadline and Budget are spent by now
	ctx, cancel := g.cfg.bound(context.WithValue(context.WithoutCancel(ctx), budgetKey{}, nil))
	defer cancel()
	if g.cfg.countIf != nil && status != 0 && !g.cfg.countIf(status) {
		return res.settle(ctx, 0, true)
	}
	return res.settle(ctx, -1, true)
}

// Serve runs next for a request that passed holding res, its Verdict's
// Reservation (nil: none). The handler finds res with ReservationFrom; when
// the handler returns or panics (status 500) res is finished with the
// response status (Finish), and the request's InFlight slots are released
// as soon as its context ends. Middleware and levels serve with it.
func (g *Guard) Serve(w http.ResponseWriter, r *http.Request, next http.Handler, res *Reservation) {
	if res == nil {
		next.ServeHTTP(w, r)
		return
	}
	ctx := context.WithValue(r.Context(), reservationKey{}, res)
	sw := &status.Recorder{ResponseWriter: w}
	returned := false
	if g.limiter.lease > 0 {
		stop := context.AfterFunc(r.Context(), func() {
			rctx, cancel := g.cfg.bound(context.Background())
			defer cancel()
			if err := res.Release(rctx); err != nil {
				g.Report(r, err)
			}
		})
		defer stop()
	}
	defer func() {
		code := sw.Status()
		if !returned {
			code = http.StatusInternalServerError // a panic
		}
		if err := g.Finish(r.Context(), res, code); err != nil {
			g.Report(r, err)
		}
	}()
	next.ServeHTTP(sw, r.WithContext(ctx))
	returned = true
}
