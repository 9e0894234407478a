package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
)

// hostileSubjects returns n subjects built to break key schemas: braces,
// NUL, newlines, invalid UTF-8, 1 MB strings, random bytes; subjects[0] is "".
func hostileSubjects(n int) []string {
	fixed := []string{"", "{", "}", "}abc", "{}", "{a}", "a{b}c", "\x00", "a\nb", "\r\n", "\xff\xfe\xfd", "#",
		"203.0.113.7", "2001:db8::/64", strings.Repeat("{", 64), strings.Repeat("k", 64), strings.Repeat("k", 65),
		strings.Repeat("x", 1<<20), strings.Repeat("{}", 1<<19), strings.Repeat("\xff", 1<<20)}
	rng := rand.New(rand.NewPCG(1, 2))
	out := append([]string(nil), fixed...)
	seen := map[string]bool{}
	for _, s := range out {
		seen[s] = true
	}
	for len(out) < n {
		b := make([]byte, 1+rng.IntN(120))
		for i := range b {
			switch rng.IntN(4) {
			case 0:
				b[i] = "{}\x00\n#:"[rng.IntN(6)]
			case 1:
				b[i] = byte(rng.IntN(256))
			default:
				b[i] = byte('a' + rng.IntN(26))
			}
		}
		if s := string(b); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// TestHostileSubjects decides 100,000 hostile subjects with two limits each
// (two keys per call) on the cluster: no CROSSSLOT or other error, every key
// at most 200 bytes with a TTL, one pair of keys per subject, and the empty
// subject is an error.
func TestHostileSubjects(t *testing.T) {
	tg := clusterTarget(t)
	c := tg.newClient()
	t.Cleanup(func() { c.Close() })
	prefix := redistest.Prefix(t)
	s := newStore(t, c, prefix)
	limits := []ratekit.Limit{ratekit.FixedWindow(5, time.Hour), ratekit.GCRA(5, time.Hour, 5)} // horizons outlast the test
	subjects := hostileSubjects(100_000)

	if _, err := storetest.Take(context.Background(), s, "", limits, 1); !errors.Is(err, ratekit.ErrEmptyKey) {
		t.Fatalf("empty subject: %v, want ErrEmptyKey", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	work := make(chan string)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sub := range work {
				if _, err := storetest.Take(context.Background(), s, sub, limits, 1); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("subject %.40q: %w", sub, err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, sub := range subjects[1:] {
		work <- sub
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d errors, first: %v", len(errs), errs[0])
	}

	keys := keyTTLs(t, tg, prefix)
	for k, ttl := range keys {
		if len(k) > 200 {
			t.Errorf("key of %d bytes: %.80q", len(k), k)
		}
		if ttl <= 0 || ttl > time.Hour {
			t.Errorf("key %.80q has TTL %v", k, ttl)
		}
	}
	if want := 2 * (len(subjects) - 1); len(keys) != want {
		t.Fatalf("%d keys stored, want %d (two per subject)", len(keys), want)
	}
}
