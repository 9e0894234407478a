package ratekitprom_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekit/ratekit"
	ratekitprom "github.com/ratekit/ratekit/observe/prometheus"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/memstore"
)

// TestLeases: the collector reports a lease store's Stats as they are.
func TestLeases(t *testing.T) {
	global := ratekit.FixedWindow(1000, time.Hour).Named("global")
	s, err := lease.New(memstore.New(), []ratekit.Limit{global})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if d, err := storetest.Take(context.Background(), s, "all", []ratekit.Limit{global}, 1); err != nil || !d.Allowed {
			t.Fatal(d, err)
		}
	}
	c, err := ratekitprom.NewLeases(map[string]*lease.Store{"edge": s})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	st := s.Stats()
	want := `
# HELP ratekit_lease_units_held Units held now in live leases.
# TYPE ratekit_lease_units_held gauge
ratekit_lease_units_held{store="edge"} ` + itoa(st.Held) + `
# HELP ratekit_lease_units_taken_total Units of quota the leases took.
# TYPE ratekit_lease_units_taken_total counter
ratekit_lease_units_taken_total{store="edge"} ` + itoa(st.Taken) + `
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekit_lease_units_held", "ratekit_lease_units_taken_total"); err != nil {
		t.Fatal(err)
	}
	if st.Taken < 5 || st.Spent() != 5 {
		t.Fatalf("stats %+v: want at least 5 taken and 5 spent", st)
	}
	if _, err := ratekitprom.NewLeases(map[string]*lease.Store{"": s}); err == nil {
		t.Fatal("an unnamed store was accepted")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
