package redisengine

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// cannedConn answers every call with reply, as Redis would a decision of
// one limit that admits: the Go side of a decision, without the network.
type cannedConn struct{ reply []int64 }

func (c cannedConn) Eval(context.Context, *Command) (any, error) { return c.reply, nil }

func (cannedConn) LoadLibrary(context.Context, string) error { return nil }

// BenchmarkDecisionCPU is the Go work of one decision on the Redis path
// (tag, keys, arguments, the call through a Conn, the reply's checks):
// what the engine adds to a round trip.
func BenchmarkDecisionCPU(b *testing.B) {
	e, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	reply := []int64{1, 99, 60_000_000, 0, 0, 0, 0}
	p, err := e.Prepare(cannedConn{reply}, []ratekit.Limit{ratekit.FixedWindow(100, time.Minute).Named("api")})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Take(ctx, "203.0.113.7", 1); err != nil {
			b.Fatal(err)
		}
	}
}
