package ratekitprom

import (
	"fmt"
	"maps"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekit/ratekit/store/lease"
)

// Leases exports the Stats of lease stores (store/lease), read at each
// scrape and labelled by store name: the counters
// ratekit_lease_debits_total and ratekit_lease_units_{taken,lapsed,dropped}_total
// and the gauges ratekit_lease_units_held and ratekit_lease_subjects (units
// admitted from leases are taken − lapsed − dropped − held). It is a
// prometheus.Collector, safe for concurrent use; build it with NewLeases.
type Leases struct {
	stores map[string]*lease.Store // a copy of NewLeases' map
	descs  [6]*prometheus.Desc
}

// NewLeases returns a collector of the lease stores by name, configured by
// opts as New configures Metrics (namespace and constant labels). A nil
// store or an empty name is an error.
func NewLeases(stores map[string]*lease.Store, opts ...Option) (*Leases, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	for name, s := range stores {
		if name == "" || s == nil {
			return nil, fmt.Errorf("ratekit: ratekitprom: lease store %q is nil or unnamed; name every store", name)
		}
	}
	l := &Leases{stores: maps.Clone(stores)}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(c.namespace, "lease", name), help, []string{"store"}, c.labels)
	}
	l.descs = [6]*prometheus.Desc{
		desc("debits_total", "Leases of quota taken from the shared store."),
		desc("units_taken_total", "Units of quota the leases took."),
		desc("units_lapsed_total", "Leased units whose window ended before they were spent."),
		desc("units_dropped_total", "Leased units a Reset discarded."),
		desc("units_held", "Units held now in live leases."),
		desc("subjects", "Subjects with a live lease."),
	}
	return l, nil
}

// Describe sends the series' descriptions (prometheus.Collector).
func (l *Leases) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range l.descs {
		ch <- d
	}
}

// Collect reads every store's Stats and sends them (prometheus.Collector).
func (l *Leases) Collect(ch chan<- prometheus.Metric) {
	for name, s := range l.stores {
		st := s.Stats()
		vals := [6]float64{float64(st.Leases), float64(st.Taken), float64(st.Lapsed), float64(st.Dropped), float64(st.Held), float64(st.Subjects)}
		for j, d := range l.descs {
			kind := prometheus.CounterValue
			if j >= 4 {
				kind = prometheus.GaugeValue
			}
			ch <- prometheus.MustNewConstMetric(d, kind, vals[j], name)
		}
	}
}
