package denycache_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/memstore"
)

// takeOnly hides the settling methods of a store's prepared forms.
type takeOnly struct{ ratekit.Store }

func (s takeOnly) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	p, err := s.Store.Prepare(limits)
	if err != nil {
		return nil, err
	}
	return struct{ ratekit.Prepared }{p}, nil
}

// TestCheckSettleAsksTheInnerStore: ratekit.New refuses a Limiter with an
// InFlight limit on a deny cache whose inner store cannot settle, or
// cannot settle those limits (a lease store, for its leased limit), with
// the error the inner store would return at request time; it accepts one
// the inner store can settle.
func TestCheckSettleAsksTheInnerStore(t *testing.T) {
	ms := memstore.New()
	defer ms.Close()
	rate, slots := ratekit.FixedWindow(1000, time.Minute).Named("rate"), ratekit.InFlight(3).Named("slots")
	ls, err := lease.New(ms, []ratekit.Limit{rate})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		inner  ratekit.Store
		limits []ratekit.Limit
		want   string // "" when accepted
	}{
		{"memstore", ms, []ratekit.Limit{rate, slots}, ""},
		{"no settler", takeOnly{ms}, []ratekit.Limit{slots}, "cannot settle"},
		{"leased limit", ls, []ratekit.Limit{rate, slots}, "cannot settle"},
		{"beside a leased limit", ls, []ratekit.Limit{slots}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ratekit.New(denycache.New(c.inner), c.limits...)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (!errors.Is(err, ratekit.ErrInvalidLimit) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("New: %v; want ErrInvalidLimit saying %q", err, c.want)
			}
		})
	}
}
