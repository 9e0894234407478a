package bench

import (
	"context"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/calendar"
	"github.com/ratekit/ratekit/store/redisengine"
)

// cannedConn answers every call with reply, as Redis would a decision of one
// limit that admits: the Go side of a decision on the Redis path, without
// the network, the client or Redis.
type cannedConn struct{ reply []int64 }

func (c cannedConn) Eval(context.Context, *redisengine.Command) (any, error) { return c.reply, nil }

func (cannedConn) LoadLibrary(context.Context, string) error { return nil }

// BenchmarkEngineDecision is the Go work of one decision in the Redis engine
// (keys, arguments, the call through a Conn, the reply's checks) for a fixed
// window and for a calendar day in America/New_York with the same quota:
// what a calendar adds on the Go side (its arguments follow the clock, see
// store/redisengine prepared.args). The reply is the same admission for both.
func BenchmarkEngineDecision(b *testing.B) {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name  string
		limit ratekit.Limit
	}{
		{"fixed", ratekit.FixedWindow(1<<40, time.Hour)},
		{"calendar", ratekit.Calendar(1<<40, calendar.Day, loc)},
	}
	reply := []int64{1, 99, 60_000_000, 0, 0, 0, 60_000_000}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e, err := redisengine.New(redisengine.Options{})
			if err != nil {
				b.Fatal(err)
			}
			p, err := e.Prepare(cannedConn{reply}, []ratekit.Limit{c.limit})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := p.Take(ctx, keys[i%nkeys], 1); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
