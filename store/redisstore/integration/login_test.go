package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
)

// deviceKey signs the device tokens of the login tests.
var deviceKey = []byte("ratekit login tests: a device key of 32 bytes or more")

// A loginSite is POST /login behind the README's login protection: a
// per-IP lockout (50 failures an hour, counting 400, 413 and 429 too) around
// a per-account one (5 in 15 minutes, 20 in 24 hours) with trusted devices.
// Every account's password is "right"; minute is one simulated minute.
type loginSite struct {
	account, perIP *lockout.Lockout
	h              http.Handler
	mu             sync.Mutex
	checked        map[string]int // wrong passwords that reached the check, per account
}

func newLoginSite(t *testing.T, s ratekit.Store, minute time.Duration) *loginSite {
	t.Helper()
	account, err := lockout.New(s, lockout.Config{Name: "login", Timeout: 5 * time.Second, Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: 15 * minute, Block: 15 * minute},
		{Scope: "long", Attempts: 20, Window: 24 * 60 * minute, Block: 24 * 60 * minute},
	}, Devices: &lockout.Devices{Keys: [][]byte{deviceKey}, Failures: 10, MaxDevices: 5}})
	if err != nil {
		t.Fatal(err)
	}
	perIP, err := lockout.New(s, lockout.Config{Name: "login-ip", Timeout: 5 * time.Second, Windows: []lockout.Window{
		{Scope: "ip", Attempts: 50, Window: 60 * minute, Block: 60 * minute}}})
	if err != nil {
		t.Fatal(err)
	}
	site := &loginSite{account: account, perIP: perIP, checked: map[string]int{}}
	ipFailures := lockout.FailureStatuses(http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity,
		http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests)
	site.h = perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess(), ipFailures)(
		account.Middleware(bodykey.FormValue("username"))(http.HandlerFunc(site.check)))
	return site
}

func (s *loginSite) check(w http.ResponseWriter, r *http.Request) {
	if !checkLogin(w, r) {
		s.mu.Lock()
		s.checked[r.FormValue("username")]++
		s.mu.Unlock()
	}
}

// checkLogin is the password check of the login tests: every account's
// password is "right"; a wrong one is 401, a right one is LoggedIn and 200.
// It reports whether the password was right.
func checkLogin(w http.ResponseWriter, r *http.Request) bool {
	if r.FormValue("password") != "right" {
		w.WriteHeader(http.StatusUnauthorized)
		return false
	}
	if err := lockout.LoggedIn(r.Context(), r.FormValue("username")); err != nil && !errors.Is(err, lockout.ErrTooManyDevices) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	_, _ = w.Write([]byte("welcome"))
	return true
}

// A reply is what a login got: its status, the policy and Retry-After of a
// 429 TOO_MANY_ATTEMPTS, and the device cookies it set, in order (cookie:
// the last one, nil when none).
type reply struct {
	code    int
	policy  string
	retry   string
	cookie  *http.Cookie
	cookies []*http.Cookie
}

// String is "200", "401", or "429 <policy> <Retry-After>" (anything else
// shows its body).
func (r reply) String() string {
	if r.policy != "" {
		return fmt.Sprintf("%d %s %s", r.code, r.policy, r.retry)
	}
	return fmt.Sprint(r.code)
}

// loginRequest is a login from addr with the given cookies.
func loginRequest(user, password, addr string, cookies ...*http.Cookie) *http.Request {
	form := url.Values{"username": {user}, "password": {password}}
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = addr
	for _, c := range cookies {
		r.AddCookie(c)
	}
	return r
}

// postLogin sends a login from addr through h with the given cookies.
func postLogin(h http.Handler, user, password, addr string, cookies ...*http.Cookie) reply {
	r := loginRequest(user, password, addr, cookies...)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	out := reply{code: rec.Code}
	if len(rec.Header()["Set-Cookie"]) > 0 {
		for _, c := range rec.Result().Cookies() {
			if strings.HasPrefix(c.Name, "__Host-ratekit-device-") {
				out.cookie, out.cookies = c, append(out.cookies, c)
			}
		}
	}
	if rec.Code == http.StatusTooManyRequests {
		var body struct {
			Code    string
			Context struct{ Policy string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Code != "TOO_MANY_ATTEMPTS" {
			out.policy = "?" + rec.Body.String()
		} else {
			out.policy, out.retry = body.Context.Policy, rec.Header().Get("Retry-After")
		}
	} else if rec.Code != 200 && rec.Code != 401 {
		out.policy = "?" + rec.Body.String()
	}
	return out
}

// The attack: every simulated minute, attackSteps times, each of 10·V
// attacker addresses sends one wrong password, 10 to each of V victims, and
// then every victim logs in with the right one from an address of its own:
// even victims with the device cookie of a login before the attack, odd
// ones without.
const attackSteps = 60

func victim(v int) string           { return fmt.Sprintf("victim-%03d", v) }
func victimAddr(v int) string       { return fmt.Sprintf("192.0.2.%d:5000", v) }
func attackerAddr(a int) string     { return fmt.Sprintf("10.0.%d.%d:4000", a/250, a%250) }
func attackerOf(step, j, n int) int { return (j*7 + step*13) % n } // each address once a step (V no multiple of 7)

// attackRecord is what the attack saw.
type attackRecord struct {
	checked [][]int          // per step, per victim: wrong passwords that reached the check
	guesses []map[string]int // per step: the attackers' replies, by status and policy
	owners  [][]string       // per victim without a cookie, per step: its reply
	errs    []string         // victims with a cookie that were not let in at once
	begin   []time.Time      // per step: when it began and ended (real time)
	end     []time.Time
	cookies []*http.Cookie // per victim, its cookie (nil without)
}

// runAttack plays the attack on site with v victims and 10·v attacker
// addresses, perStep guesses a step (10·v: every address once; fewer: the
// addresses take turns); at(step) brings the clock to that step (step
// attackSteps: after the hour).
func runAttack(t *testing.T, site *loginSite, victims, perStep int, at func(step int)) *attackRecord {
	t.Helper()
	rec := &attackRecord{cookies: make([]*http.Cookie, victims), owners: make([][]string, victims)}
	for v := 0; v < victims; v += 2 {
		r := postLogin(site.h, victim(v), "right", victimAddr(v))
		if r.code != 200 || r.cookie == nil {
			t.Fatalf("%s's login before the attack: %v, cookie %v", victim(v), r, r.cookie)
		}
		rec.cookies[v] = r.cookie
	}
	attackers := 10 * victims
	var mu sync.Mutex
	for step := range attackSteps {
		at(step)
		rec.begin = append(rec.begin, time.Now())
		before := site.checkedSoFar(victims)
		guesses := map[string]int{}
		parallel(perStep, func(j int) {
			a := attackerOf(step, j, attackers)
			if perStep < attackers {
				a = (j + step*perStep) % attackers
			}
			r := postLogin(site.h, victim(j%victims), "guess", attackerAddr(a))
			mu.Lock()
			guesses[strings.TrimSpace(fmt.Sprint(r.code, " ", r.policy))]++
			mu.Unlock()
		})
		rec.guesses = append(rec.guesses, guesses)
		parallel(victims, func(v int) {
			r := postLogin(site.h, victim(v), "right", victimAddr(v), cookieList(rec.cookies[v])...)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case rec.cookies[v] != nil && (r.code != 200 || r.cookie != nil):
				rec.errs = append(rec.errs, fmt.Sprintf("step %d: %s with its cookie: %v, cookie %v", step, victim(v), r, r.cookie))
			case rec.cookies[v] == nil:
				rec.owners[v] = append(rec.owners[v], r.String())
				if r.code == 200 && r.cookie != nil { // let in: from now on it has a cookie
					rec.cookies[v] = r.cookie
				}
			}
		})
		rec.end = append(rec.end, time.Now())
		row := site.checkedSoFar(victims)
		for v := range row {
			row[v] -= before[v]
		}
		rec.checked = append(rec.checked, row)
	}
	at(attackSteps)
	return rec
}

// checkedSoFar returns the wrong passwords checked so far per victim.
func (s *loginSite) checkedSoFar(victims int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, victims)
	for v := range out {
		out[v] = s.checked[victim(v)]
	}
	return out
}

func cookieList(c *http.Cookie) []*http.Cookie {
	if c == nil {
		return nil
	}
	return []*http.Cookie{c}
}

// parallel runs f(0) … f(n-1) on 64 goroutines.
func parallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// wantOwner is the exact reply of a victim without a cookie at a step, on a
// fake clock: the attackers' 5 failures at step 0 block the account until
// step 15, where 5 more block it until 30, then 45; there the 20th failure
// fills the long window and the 6th guess blocks it for 24 hours. Each of
// the owner's 429s counts against its address too: the 51st, at step 50,
// blocks the address for an hour.
func wantOwner(step int) string {
	switch {
	case step < 45:
		return fmt.Sprintf("429 temp %d", (15-step%15)*60)
	case step < 50:
		return fmt.Sprintf("429 long %d", 24*3600-(step-45)*60)
	default:
		return fmt.Sprintf("429 ip %d", 3600-(step-50)*60)
	}
}

// checkExact asserts the exact figures of the attack on a fake clock: every
// account's password check saw exactly 5 guesses at steps 0, 15, 30 and 45,
// none at any other (20 in the hour, 20·V in all); the attackers' replies
// follow; each address is blocked from step 50.
func checkExact(t *testing.T, rec *attackRecord, victims int) {
	t.Helper()
	for _, e := range rec.errs {
		t.Error(e)
	}
	total := 0
	for step, row := range rec.checked {
		want := 0
		if step%15 == 0 && step < 50 {
			want = 5
		}
		for v, n := range row {
			total += n
			if n != want {
				t.Fatalf("step %d: %s had %d guesses checked, want %d", step, victim(v), n, want)
			}
		}
	}
	if total != 20*victims {
		t.Fatalf("%d guesses checked in the hour, want %d (20 an account)", total, 20*victims)
	}
	wantGuesses := map[string]int{"401": 20 * victims, "429 temp": 435 * victims, "429 long": 45 * victims, "429 ip": 100 * victims}
	got := map[string]int{}
	for _, g := range rec.guesses {
		for k, n := range g {
			got[k] += n
		}
	}
	if !maps.Equal(got, wantGuesses) {
		t.Fatalf("the attackers' replies: %v, want %v", got, wantGuesses)
	}
	for v := 1; v < victims; v += 2 {
		if len(rec.owners[v]) != attackSteps {
			t.Fatalf("%s without a cookie: %v, want a reply at each of %d steps", victim(v), rec.owners[v], attackSteps)
		}
		for step, got := range rec.owners[v] {
			if got != wantOwner(step) {
				t.Fatalf("%s without a cookie, step %d: %s, want %s", victim(v), step, got, wantOwner(step))
			}
		}
	}
}

// TestLoginAttack: 10·V attacker addresses spread wrong passwords over V
// victim accounts for an hour. Victims with a device cookie are let in at
// every step; the others are refused while their account is blocked; no
// account's password check sees more guesses than the windows allow. On a
// fake clock the figures are exact: on memstore with V = 100 (1,000
// addresses), and on the Redis engine in miniredis with V = 2, the record
// identical to a memstore twin's (miniredis runs a script in about 2 ms
// under -race: 100 victims would take minutes). On a real redis-server
// (V = 100 and 1,000 addresses, half of them guessing each step, so that a
// step keeps to its 100 ms under -race on 2 CPUs) they are bounds.
func TestLoginAttack(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	fake := func(t *testing.T, s ratekit.Store, clock *redistest.Clock, victims int) *attackRecord {
		site := newLoginSite(t, s, time.Minute)
		rec := runAttack(t, site, victims, 10*victims, func(int) { clock.Advance(time.Minute) })
		checkExact(t, rec, victims)
		// An hour after step 0 every account is blocked by its long window
		// until 24 hours after step 45, to the millisecond.
		ctx := context.Background()
		for v := range victims {
			d, err := site.account.Check(ctx, victim(v))
			if err != nil || d.Allowed || d.Scope != "long" || d.RetryAfter != 23*time.Hour+45*time.Minute {
				t.Fatalf("%s after the hour: %+v %v; want blocked by long for 23h45m", victim(v), d, err)
			}
		}
		clock.Advance(23*time.Hour + 45*time.Minute - time.Millisecond)
		if r := postLogin(site.h, victim(1), "right", victimAddr(1)); r.String() != "429 long 1" {
			t.Fatalf("%s 1 ms before the block ends: %v, want 429 long 1", victim(1), r)
		}
		clock.Advance(time.Millisecond)
		if r := postLogin(site.h, victim(1), "right", victimAddr(1)); r.code != 200 || r.cookie == nil {
			t.Fatalf("%s as the block ends: %v, cookie %v; want 200 and a cookie", victim(1), r, r.cookie)
		}
		return rec
	}
	// The fake-clock runs share the CPU; the real-time one runs alone, so
	// that its steps keep to their 100 ms.
	t.Run("fake-clock", func(t *testing.T) {
		t.Run("memstore", func(t *testing.T) {
			t.Parallel()
			clock := redistest.NewClock(start)
			fake(t, memstore.New(memstore.WithClock(clock.Now)), clock, 100)
		})
		t.Run("miniredis", func(t *testing.T) {
			t.Parallel()
			m := miniredis.RunT(t)
			clock := redistest.NewRedisClock(start, m)
			c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
			t.Cleanup(func() { c.Close() })
			s, err := redisstore.New(c, redisstore.WithPrefix("login"))
			if err != nil {
				t.Fatal(err)
			}
			got := fake(t, s, clock, 2)
			twin := redistest.NewClock(start)
			want := fake(t, memstore.New(memstore.WithClock(twin.Now)), twin, 2)
			if !slices.EqualFunc(got.checked, want.checked, slices.Equal) || !slices.EqualFunc(got.guesses, want.guesses, maps.Equal) ||
				!slices.EqualFunc(got.owners, want.owners, slices.Equal) {
				t.Fatalf("miniredis and memstore differ:\n%v %v %v\n%v %v %v", got.checked, got.guesses, got.owners, want.checked, want.guesses, want.owners)
			}
		})
	})
	t.Run("redis-server", testAttackRealTime)
}

// testAttackRealTime plays the attack on a real redis-server, a simulated
// minute lasting 100 ms (windows of 1.5 s, 144 s and 6 s). Steps may run
// late, so it asserts what no timing can change: victims with a cookie are
// let in at every step; no account's check sees more than 20 guesses
// between two resets (the long window outlasts the run), nor more than 5
// per 1.5 s a step lasts; and, when the steps ran on time, what they imply.
func testAttackRealTime(t *testing.T) {
	// 100 victims, 1,000 addresses, of which half guess each step (5 guesses
	// an account a step, as on the fake clock).
	const minute, victims, perStep = 100 * time.Millisecond, 100, 500
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	site := newLoginSite(t, s, minute)
	var begin time.Time
	rec := runAttack(t, site, victims, perStep, func(step int) {
		switch {
		case step == 0:
			begin = time.Now()
		case step < attackSteps:
			time.Sleep(time.Until(begin.Add(time.Duration(step) * minute))) // the simulated minute, not a wait for a race
		}
	})
	run, longest := rec.end[attackSteps-1].Sub(rec.begin[0]), time.Duration(0)
	for step := range rec.begin {
		longest = max(longest, rec.end[step].Sub(rec.begin[step]))
	}
	t.Logf("the hour took %v; its steps at most %v", run, longest)
	for step, g := range rec.guesses {
		for k := range g {
			if k != "401" && k != "429 temp" && k != "429 long" && k != "429 ip" {
				t.Fatalf("step %d: the attackers got %v, want 401 or 429 TOO_MANY_ATTEMPTS only", step, g)
			}
		}
	}
	if run >= 24*60*minute {
		t.Fatalf("the run took %v, longer than the long window: its bound no longer holds", run)
	}
	for _, e := range rec.errs {
		t.Error(e)
	}
	temp, letIn := 15*minute, 0
	for v := range victims {
		reset := attackSteps // the step at which the owner without a cookie got in (a reset), if any
		if v%2 == 1 {
			for step, r := range rec.owners[v] {
				if r == "200" {
					reset, letIn = step, letIn+1
				} else if !strings.HasPrefix(r, "429 temp ") && !strings.HasPrefix(r, "429 long ") && !strings.HasPrefix(r, "429 ip ") {
					t.Fatalf("%s without a cookie, step %d: %s, want 200 or 429 TOO_MANY_ATTEMPTS", victim(v), step, r)
				}
			}
			if d := rec.end[0].Sub(rec.begin[0]); d < temp && !strings.HasPrefix(rec.owners[v][0], "429 temp ") {
				t.Fatalf("%s without a cookie after the first %v of the attack: %s, want 429 temp", victim(v), d, rec.owners[v][0])
			}
		}
		var epochs [2]int
		for step, row := range rec.checked {
			d := rec.end[step].Sub(rec.begin[step])
			if bound := 5 * (1 + int(d/temp)); row[v] > bound {
				t.Fatalf("step %d (%v): %s had %d guesses checked, more than %d", step, d, victim(v), row[v], bound)
			}
			if step == 0 && d < temp && row[v] != 5 {
				t.Fatalf("step 0 (%v): %s had %d guesses checked, want 5", d, victim(v), row[v])
			}
			epochs[min(step/(reset+1), 1)] += row[v]
		}
		if epochs[0] > 20 || epochs[1] > 20 {
			t.Fatalf("%s had %v guesses checked before and after its owner's reset (step %d), more than 20", victim(v), epochs, reset)
		}
	}
	t.Logf("%d of %d victims without a cookie were let in between two blocks", letIn, victims/2)
	// Every attacker address failed every other step: 30 failures in the
	// hour, under the per-IP lockout's 50.
	for step, g := range rec.guesses {
		if g["429 ip"] != 0 {
			t.Fatalf("step %d: the attackers got %v; no address reaches the per-IP bound", step, g)
		}
	}
	if d := rec.end[50].Sub(rec.begin[0]); d < 60*minute && perStep == 10*victims {
		t.Logf("steps 0 to 50 took %v: every attacker address is refused at step 50", d)
		if g := rec.guesses[50]; g["429 ip"] != 10*victims {
			t.Fatalf("step 50, %v after the first: the attackers got %v, want %d × 429 ip", d, g, 10*victims)
		}
	} else {
		t.Logf("steps 0 to 50 took %v, more than the per-IP window: its block at step 50 is not checked", d)
	}
}
