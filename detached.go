package ratekit

import (
	"context"
	"time"
)

// detached is ctx without its cancellation: an ending request does not
// undo its settlement. A deadline of ctx still bounds it, but never to less
// than DefaultTimeout from now.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithoutCancel(ctx), noCancel
	}
	return context.WithDeadline(context.WithoutCancel(ctx), later(d, time.Now().Add(DefaultTimeout)))
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
