package memstore_test

import (
	"testing"

	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/storetest"
)

func TestReputationConformance(t *testing.T) {
	storetest.RunReputation(t, func(t *testing.T) storetest.ReputationHarness {
		c := newClock()
		return storetest.ReputationHarness{Store: memstore.New(memstore.WithClock(c.Now)), Advance: c.Advance, Now: c.Now, Exact: true}
	})
}
