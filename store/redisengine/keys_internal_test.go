package redisengine

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store"
)

// longest is a limit whose key segments are as long as validation allows.
var longest = ratekit.FixedWindow(1, time.Second).Named(strings.Repeat("n", 48))

func checkKey(t *testing.T, subject string) {
	tg, err := Tag(subject)
	if subject == "" {
		if err == nil {
			t.Fatal("empty subject accepted")
		}
		return
	}
	if err != nil {
		t.Fatalf("tag(%q): %v", subject, err)
	}
	if tg == "" || strings.ContainsAny(tg, "{}") || len(tg) > maxRawTag {
		t.Fatalf("tag(%q) = %q: empty, braced or too long", subject, tg)
	}
	if raw := len(subject) <= maxRawTag && safeTag(subject); raw != (tg == subject) {
		t.Fatalf("tag(%q) = %q: raw form used wrongly", subject, tg)
	}
	if tg != subject && (tg[0] != '#' || len(tg) != 1+hashedTagLen) {
		t.Fatalf("tag(%q) = %q: malformed hashed tag", subject, tg)
	}
	if again, _ := Tag(subject); again != tg {
		t.Fatal("tag is not deterministic")
	}
	e, err := New(Options{Prefix: strings.Repeat("p", maxPrefixLen)})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := e.Keys(subject, []ratekit.Limit{longest})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys[0]) > 200 {
		t.Fatalf("key of %d bytes: %q", len(keys[0]), keys[0])
	}
	if open := strings.IndexByte(keys[0], '{'); keys[0][open+1:open+1+len(tg)] != tg || keys[0][open+1+len(tg)] != '}' {
		t.Fatalf("key %q does not carry the tag %q as its first {…}", keys[0], tg)
	}
}

// FuzzKey checks the key builder on any subject: the empty subject is an
// error; otherwise the tag is braceless, at most 64 bytes, raw only when safe,
// deterministic, and the key is at most 200 bytes with the tag as its first
// {…} section, so Redis Cluster hashes it to the tag's slot.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"", "{", "}", "}abc", "{}", "a{b}c", "\x00", "line\nbreak", "\xff\xfe", "#hash",
		"203.0.113.7", "2001:db8::/64", strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("é", 40)} {
		f.Add(s)
	}
	f.Fuzz(checkKey)
}

func TestKeyHuge(t *testing.T) {
	checkKey(t, strings.Repeat("\x00{}", 350_000)) // ~1 MB
}

func TestValidatePrefix(t *testing.T) {
	for _, p := range []string{"", "a{b", "a}b", "has space", "\x00", strings.Repeat("p", 33), "tab\t"} {
		if validatePrefix(p) == nil {
			t.Errorf("prefix %q accepted", p)
		}
	}
	for _, p := range []string{"ratekit", "app:rl", strings.Repeat("p", 32)} {
		if err := validatePrefix(p); err != nil {
			t.Errorf("prefix %q: %v", p, err)
		}
	}
}

// TestParseReply rejects every malformed reply with an error, never a panic.
func TestParseReply(t *testing.T) {
	one := []ratekit.Limit{ratekit.FixedWindow(1, time.Second)}
	bad := []any{
		nil, "OK", int64(1), []any{}, []any{int64(1), int64(0), int64(0), int64(0), int64(0)},
		[]any{int64(1), int64(0), int64(0), int64(0), int64(0), "0", int64(0)}, []any{int64(2), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0)},
		[]any{int64(1), int64(-1), int64(0), int64(0), int64(0), int64(0), int64(0)}, []any{int64(1), int64(0), int64(-5), int64(0), int64(0), int64(0), int64(0)},
		[]any{int64(1), int64(0), int64(0), 3.5, int64(0), int64(0), int64(0)}, []any{int64(1), int64(0), int64(0), int64(0), int64(0), int64(-1), int64(0)}, []any{int64(1), int64(0), int64(0), int64(0), int64(0), int64(0), int64(-3)},
		[]any{int64(0), int64(0), int64(0), int64(0), int64(8), int64(0), int64(0)}, []any{int64(1), int64(0), int64(0), int64(0), int64(1), int64(0), int64(0)},
	}
	// the same replies as a Conn reads them when the command's reply is
	// integers only
	for _, r := range bad {
		if vals, ok := r.([]any); ok {
			ints := make([]int64, 0, len(vals))
			for _, v := range vals {
				if n, ok := v.(int64); ok {
					ints = append(ints, n)
				}
			}
			if len(ints) == len(vals) {
				bad = append(bad, ints)
			}
		}
	}
	bad = append(bad, []int64{}, []int64{1, 0, 0, 0, 0, 0, 0, 0, 0}, []int64{1, 0, 0, 0, 0, 0, -1})
	for _, r := range bad {
		if _, err := parseFor(t, one, r); err == nil {
			t.Errorf("reply %#v accepted", r)
		}
	}
	want := store.Single(ratekit.LimitState{Limit: one[0], Remaining: 3, ResetAfter: 2 * time.Millisecond, RetryAfter: 1500 * time.Microsecond, EffectiveWindow: 700 * time.Microsecond, Unsatisfiable: true, Blocked: true})
	for _, r := range []any{[]any{int64(0), int64(3), int64(2000), int64(1500), int64(3), int64(0), int64(700)}, []int64{0, 3, 2000, 1500, 3, 0, 700}} {
		d, err := parseFor(t, one, r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("%T: got %+v, want %+v", r, d, want)
		}
	}
	// two limits: one state each, combined
	two := []ratekit.Limit{one[0], ratekit.GCRA(1, time.Second, 1)}
	d, err := parseFor(t, two, []int64{1, 5, 1000, 0, 0, 0, 0, 0, 0, 3000, 2000, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || len(d.States) != 2 || d.Limit != two[1] || d.RetryAfter != 2*time.Millisecond || d.States[0].Remaining != 5 {
		t.Fatalf("two limits: got %+v", d)
	}
}

var testEngine, _ = New(Options{})

// parseFor parses reply as the reply of a decide call about limits.
func parseFor(t *testing.T, limits []ratekit.Limit, reply any) (ratekit.Decision, error) {
	t.Helper()
	p, err := testEngine.prepare(nil, limits)
	if err != nil {
		t.Fatal(err)
	}
	return p.parseDecision(reply)
}
