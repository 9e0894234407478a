package fallback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/fallback"
	"github.com/ratekit/ratekit/store/memstore"
)

func TestNewDefaults(t *testing.T) {
	s, err := fallback.New(&primary{}, memstore.New(), fallback.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := fallback.ConfigOf(s)
	want := fallback.Config{Instances: 1, Failures: 3, Retry: 250 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond}
	if got.Instances != want.Instances || got.Failures != want.Failures || got.Retry != want.Retry || got.ProbeTimeout != want.ProbeTimeout {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	if s.Open() {
		t.Fatal("a new Store is open")
	}
}

// New reports every problem at once, each prefixed once and saying how to
// fix it.
func TestNewValidates(t *testing.T) {
	mem := memstore.New()
	cases := []struct {
		name           string
		primary, local ratekit.Store
		cfg            fallback.Config
		want           []string
	}{
		{"nil primary", nil, mem, fallback.Config{}, []string{"primary store is nil"}},
		{"nil local", &primary{}, nil, fallback.Config{}, []string{"local store is nil; pass memstore.New()"}},
		{"same store", mem, mem, fallback.Config{}, []string{"same store"}},
		{"fields", &primary{}, mem, fallback.Config{Instances: -2, Failures: -1, Retry: time.Microsecond, ProbeTimeout: -time.Second},
			[]string{"Config.Instances is -2", "Config.Failures is -1", "Config.Retry is 1µs; set it to 1ms or more", "Config.ProbeTimeout is -1s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := fallback.New(c.primary, c.local, c.cfg)
			if err == nil || s != nil {
				t.Fatalf("New accepted it: %v", s)
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if n := strings.Count(msg, "ratekit: fallback: "); n != len(c.want) {
				t.Errorf("error %q: %d prefixes for %d problems", msg, n, len(c.want))
			}
		})
	}
}
