package adapter

import (
	"context"
	"net/http"

	"github.com/ratekit/ratekit"
)

// Serve runs the rest of a request that passed g.Check with a Reservation
// (Verdict.Reservation) and ends the reservation as ratekit.Middleware
// does. next runs the rest of the chain with ctx carrying res, where
// ratekit.ReservationFrom finds it, and returns the response status (0
// counts as 200). A panic in next counts as 500 and goes on. Once next
// returns or panics, res is finished with the status (Guard.Finish: a
// refund under WithCountIf, the InFlight slots released).
//
// The slots are released as soon as ctx, the request's context, ends, even
// while next runs, so that a client that went away frees its slot. Store
// errors go to report, always on the goroutine that called Serve and before
// Serve returns, so that report may read the framework's context.
func Serve(g *ratekit.Guard, ctx context.Context, res *ratekit.Reservation, report func(error), next func(ctx context.Context) int) {
	var stop func() bool
	var released chan error
	if rc := res.Decision.Receipt; rc != nil && rc.Lease != "" && ctx.Done() != nil { // else ctx never ends
		released = make(chan error, 1)
		stop = context.AfterFunc(ctx, func() {
			rctx, cancel := g.Bound(context.Background())
			defer cancel()
			released <- res.Release(rctx)
		})
	}
	status := http.StatusInternalServerError // unless next returns
	defer func() {
		if stop != nil && !stop() { // ctx ended: wait for the release
			if err := <-released; err != nil {
				report(err)
			}
		}
		if status == 0 {
			status = http.StatusOK
		}
		if err := g.Finish(ctx, res, status); err != nil {
			report(err)
		}
	}()
	status = next(g.ReservationContext(ctx, res))
}
