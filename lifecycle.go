package ratekit

import (
	"cmp"
	"context"
	"net/http"

	"github.com/ratekit/ratekit/internal/status"
)

// WithSettle lets handlers settle a request's real cost after the fact:
// the request is charged its cost (WithCost) as an estimate when it is
// admitted, and the handler calls ReservationFrom(r.Context()).Settle with
// the cost it found (tokens generated, bytes sent); without it the estimate
// stands. Settling costs one store call more per request; the rate-limit
// headers, written at admission, show the estimate.
func WithSettle() Option {
	return optionFunc(func(c *config) { c.settle = true })
}

// WithCountIf counts a request only when counts(status) reports true for
// its response status; the charge of any other request is refunded (see
// Reservation.Settle) once its handler returns, in one store call more. A
// handler that panics counts as status 500. For example, to let server
// errors cost nothing:
//
//	ratekit.WithCountIf(func(status int) bool { return status < 500 })
func WithCountIf(counts func(status int) bool) Option {
	return optionFunc(func(c *config) { c.countIf = counts })
}

// Reserving reports whether a Verdict that passes carries a Reservation to
// end with Run: the Limiter has InFlight limits, or WithSettle or
// WithCountIf is set.
func (g *Guard) Reserving() bool { return g.reserving }

// Serve runs next for a request that passed holding res, its Verdict's
// Reservation (nil: none), as Run does, with the response status next
// writes. Middleware and levels serve with it.
func (g *Guard) Serve(w http.ResponseWriter, r *http.Request, next http.Handler, res *Reservation) {
	if res == nil {
		next.ServeHTTP(w, r)
		return
	}
	g.Run(r.Context(), res, func(err error) { g.Report(r, err) }, func(ctx context.Context) int {
		sw := &status.Recorder{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		return sw.Status()
	})
}

// Run runs the rest of a request that passed Check with a Reservation, on
// any transport (Serve is net/http's). next runs with ctx carrying res (see
// ReservationFrom) and returns the response status (0 counts as 200; a panic
// counts as 500 and goes on). Once next returns or panics, even after ctx
// has ended, res is ended with that status in a store call bounded by
// WithTimeout alone: under WithCountIf a status that does not count refunds
// the whole charge; the InFlight slots are released, then the request's
// place in the instance's count. Store errors go to report, on the
// goroutine that called Run, before Run returns.
func (g *Guard) Run(ctx context.Context, res *Reservation, report func(error), next func(ctx context.Context) int) {
	code := http.StatusInternalServerError // unless next returns
	defer func() {
		if res == nil {
			return
		}
		defer res.leaveGate() // the request has ended; its store slots go first
		cost := int64(-1)     // the charge stands, unless WithCountIf refunds it
		if g.cfg.countIf != nil && !g.cfg.countIf(cmp.Or(code, http.StatusOK)) {
			cost = 0
		}
		// its own timeout: the request's deadline and Budget are spent by now
		ctx, cancel := g.Bound(context.WithValue(context.WithoutCancel(ctx), budgetKey{}, nil))
		defer cancel()
		if err := res.settle(ctx, cost, true); err != nil {
			report(err)
		}
	}()
	code = next(context.WithValue(ctx, reservationKey{}, res))
}

// reservationKey carries a request's Reservation in its context.
type reservationKey struct{}

// ReservationFrom returns the Reservation of the request whose context is
// ctx, made by Middleware or an adapter when its Guard is Reserving; nil
// otherwise. A handler settles the request's real cost with it.
func ReservationFrom(ctx context.Context) *Reservation {
	r, _ := ctx.Value(reservationKey{}).(*Reservation)
	return r
}
