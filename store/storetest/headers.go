package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// exactWindow reports whether RateLimit's t is exact for l: every
// algorithm but a LeakyBucket in queue mode, whose admitted requests wait
// their turn and whose t can be longer.
func exactWindow(l ratekit.Limit) bool {
	sp := l.Spec()
	return sp.Algorithm != "leaky" || sp.MaxWait == 0
}

// effectiveWindow checks, from states reached by random sequences of
// requests on a fake clock, that the RateLimit field tells the truth for l
// (whose t is exact, see exactWindow): the r
// requests it announces pass at once, one more is denied through the last
// whole second before t and passes at t, and a denial's Retry-After is never
// before t, equal to it for a cost of 1. The headers are read by an
// independent parser of the Structured Field.
func effectiveWindow(t *testing.T, h Harness, l ratekit.Limit) {
	lim, err := ratekit.New(h.Store, l)
	if err != nil {
		t.Fatal(err)
	}
	// The headers' truth is checked here, not latency: a loaded machine
	// under -race must not turn the default 100 ms into a failure.
	guard := ratekit.NewGuard(lim, ratekit.WithTimeout(5*time.Second))
	rng := rand.New(rand.NewPCG(uint64(len(l.Name())), 42))
	window := l.Spec().Window
	send := func(key string, cost int64) (ratekit.Verdict, http.Header) {
		hdr := http.Header{}
		v := guard.Check(context.Background(), key, nil, cost, hdr)
		if v.Err != nil {
			t.Fatalf("Check: %v", v.Err)
		}
		return v, hdr
	}
	for trial := range 30 {
		key := fmt.Sprintf("trial-%d", trial)
		var v ratekit.Verdict
		var hdr http.Header
		var cost int64
		for range 1 + rng.IntN(12) {
			h.Advance(time.Duration(rng.Int64N(int64(window/3)/int64(time.Millisecond))) * time.Millisecond)
			cost = []int64{1, 1, 1, 2}[rng.IntN(4)]
			v, hdr = send(key, cost)
		}
		fields, err := parseRateLimit(hdr.Get("RateLimit"))
		if err != nil {
			t.Fatalf("trial %d: RateLimit %q: %v", trial, hdr.Get("RateLimit"), err)
		}
		f, ok := fields[l.Name()]
		if !ok {
			t.Fatalf("trial %d: RateLimit %q has no item %q", trial, hdr.Get("RateLimit"), l.Name())
		}
		r, secs := f["r"], f["t"]
		if ra := hdr.Get("Retry-After"); ra != "" && !v.Pass && r == 0 {
			n, err := strconv.ParseInt(ra, 10, 64)
			if err != nil || n < secs || cost == 1 && n != secs {
				t.Fatalf("trial %d: Retry-After %q with r=0;t=%d (cost %d): want ≥ t, = t for cost 1", trial, ra, secs, cost)
			}
		}
		for i := range r {
			if v2, hdr2 := send(key, 1); !v2.Pass {
				t.Fatalf("trial %d: %s announced (last request: cost %d, passed %v), request %d denied: %s, Retry-After %s", trial, hdr.Get("RateLimit"), cost, v.Pass, i+1, hdr2.Get("RateLimit"), hdr2.Get("Retry-After"))
			}
		}
		if secs > 0 {
			h.Advance(time.Duration(secs-1) * time.Second)
		}
		if v, _ := send(key, 1); v.Pass {
			t.Fatalf("trial %d: r=%d;t=%d (last request: cost %d, passed %v), yet one more passed %d s later", trial, r, secs, cost, v.Pass, max(secs-1, 0))
		}
		h.Advance(time.Second)
		if secs == 0 {
			continue
		}
		if v, hdr := send(key, 1); !v.Pass {
			t.Fatalf("trial %d: r=%d;t=%d, yet one more was denied at t: %s", trial, r, secs, hdr.Get("RateLimit"))
		}
	}
}

// parseRateLimit parses a RateLimit field, a Structured Field List (RFC
// 8941) of strings with integer parameters, into each item's parameters.
// It accepts nothing else.
func parseRateLimit(s string) (map[string]map[string]int64, error) {
	out := map[string]map[string]int64{}
	for _, member := range strings.Split(s, ",") {
		member = strings.TrimLeft(member, " \t")
		if !strings.HasPrefix(member, `"`) {
			return nil, fmt.Errorf("member %q is not a string item", member)
		}
		end := strings.IndexByte(member[1:], '"')
		if end < 0 {
			return nil, fmt.Errorf("member %q: unterminated string", member)
		}
		name, rest := member[1:1+end], member[2+end:]
		if strings.ContainsAny(name, `\`) {
			return nil, fmt.Errorf("escapes are not expected in %q", name)
		}
		if rest != "" && rest[0] != ';' {
			return nil, fmt.Errorf("member %q: %q is not a parameter", member, rest)
		}
		params := map[string]int64{}
		for _, kv := range strings.Split(rest, ";")[1:] {
			k, val, ok := strings.Cut(kv, "=")
			if !ok || k == "" || strings.ToLower(k) != k {
				return nil, fmt.Errorf("member %q: bad parameter %q", member, kv)
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 0 || n > 999_999_999_999_999 || len(val) > 15 {
				return nil, fmt.Errorf("member %q: %s=%q is not a non-negative sf-integer", member, k, val)
			}
			if _, dup := params[k]; dup {
				return nil, fmt.Errorf("member %q: %s twice", member, k)
			}
			params[k] = n
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("item %q twice", name)
		}
		out[name] = params
	}
	return out, nil
}
