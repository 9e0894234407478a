package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/bodykey"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

// devicesLockout is the lockout of the device tests: 5 failures in 15
// minutes block the account for 15 minutes; a trusted device may fail 3
// times a day; an account may trust 3 devices.
func devicesLockout(t *testing.T, s ratekit.Store) *lockout.Lockout {
	t.Helper()
	lo, err := lockout.New(s, lockout.Config{Name: "login", Timeout: 5 * time.Second, Windows: []lockout.Window{
		{Scope: "temp", Attempts: 5, Window: 15 * time.Minute, Block: 15 * time.Minute},
	}, Devices: &lockout.Devices{Keys: [][]byte{deviceKey}, Failures: 3, MaxDevices: 3}})
	if err != nil {
		t.Fatal(err)
	}
	return lo
}

// loginHandler is POST /login behind lo's Middleware alone; every
// account's password is "right".
func loginHandler(lo *lockout.Lockout) http.Handler {
	return lo.Middleware(bodykey.FormValue("username"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checkLogin(w, r)
	}))
}

// TestDevicesAcrossInstances: two instances of a service, each with its own
// Redis client, store and Lockout over one Redis, agree on every device: a
// cookie set through one is trusted by the other, a device revoked through
// one (past its failures, or by RevokeDevices) is untrusted by the other.
// On standalone Redis and the cluster, with go-redis and with rueidis.
func TestDevicesAcrossInstances(t *testing.T) {
	goRedis := func(newClient func() redis.UniversalClient) func(t *testing.T, prefix string) ratekit.Store {
		return func(t *testing.T, prefix string) ratekit.Store {
			c := newClient()
			t.Cleanup(func() { c.Close() })
			s, err := redisstore.New(c, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	rueidisStore := func(addrs []string) func(t *testing.T, prefix string) ratekit.Store {
		return func(t *testing.T, prefix string) ratekit.Store {
			c, err := rueidis.NewClient(rueidisstore.ClientOption(addrs...))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			s, err := rueidisstore.New(c, rueidisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	deployments := []struct {
		name   string
		stores func(t *testing.T) func(t *testing.T, prefix string) ratekit.Store
	}{
		{"standalone", func(t *testing.T) func(*testing.T, string) ratekit.Store {
			srv := redistest.Standalone(t)
			return goRedis(func() redis.UniversalClient { return srv.NewClient(nil) })
		}},
		{"cluster", func(t *testing.T) func(*testing.T, string) ratekit.Store {
			c := redistest.StartCluster(t)
			return goRedis(func() redis.UniversalClient { return c.NewClient(nil) })
		}},
		{"rueidis-standalone", func(t *testing.T) func(*testing.T, string) ratekit.Store {
			return rueidisStore([]string{redistest.Standalone(t).Addr})
		}},
		{"rueidis-cluster", func(t *testing.T) func(*testing.T, string) ratekit.Store {
			return rueidisStore(redistest.StartCluster(t).Addrs)
		}},
	}
	for _, dep := range deployments {
		t.Run(dep.name, func(t *testing.T) {
			newStore, prefix := dep.stores(t), redistest.Prefix(t)
			testDevicesAcross(t, devicesLockout(t, newStore(t, prefix)), devicesLockout(t, newStore(t, prefix)))
		})
	}
}

func testDevicesAcross(t *testing.T, a, b *lockout.Lockout) {
	ctx := context.Background()
	hA, hB := loginHandler(a), loginHandler(b)
	const addr = "192.0.2.1:5000"
	look := func(lo *lockout.Lockout, account string, c *http.Cookie) lockout.Decision {
		t.Helper()
		d, err := lo.AttemptDevice(ctx, account, c.Value)
		if err != nil {
			t.Fatal(err)
		}
		if err := lo.Refund(ctx, d); err != nil { // give the attempt back: these are looks, not logins
			t.Fatal(err)
		}
		return d
	}

	// A cookie set through A is trusted through B, while the account is
	// locked for everyone else.
	laptop := postLogin(hA, "alice", "right", addr).cookie
	if laptop == nil || laptop.Value == "" {
		t.Fatal("alice's login through A set no device cookie")
	}
	for i := range 5 {
		if r := postLogin(hB, "alice", "guess", addr); r.code != 401 {
			t.Fatalf("failure %d through B: %v", i+1, r)
		}
	}
	if r := postLogin(hA, "alice", "right", addr); r.String() != "429 temp 900" {
		t.Fatalf("alice without her cookie through A: %v, want 429 temp 900", r)
	}
	for name, h := range map[string]http.Handler{"A": hA, "B": hB} {
		if r := postLogin(h, "alice", "right", addr, laptop); r.code != 200 || r.cookie != nil {
			t.Fatalf("alice with her cookie through %s: %v, cookie %v; want 200 and no new cookie", name, r, r.cookie)
		}
	}

	// The device fails its 3 failures through B; the 4th revokes it: the
	// cookie is deleted, the attempt counts as one without it (the account
	// is locked: 429), and A no longer trusts it.
	for i := range 3 {
		if r := postLogin(hB, "alice", "guess", addr, laptop); r.code != 401 || r.cookie != nil {
			t.Fatalf("device failure %d through B: %v, cookie %v; want 401", i+1, r, r.cookie)
		}
	}
	r := postLogin(hB, "alice", "guess", addr, laptop)
	if r.String() != "429 temp 900" || r.cookie == nil || r.cookie.MaxAge >= 0 || r.cookie.Value != "" {
		t.Fatalf("the 4th device failure through B: %v, cookie %+v; want 429 temp and the cookie deleted", r, r.cookie)
	}
	for name, lo := range map[string]*lockout.Lockout{"A": a, "B": b} {
		if d := look(lo, "alice", laptop); d.Trusted || !d.Revoked || d.Allowed {
			t.Fatalf("the revoked cookie through %s: %+v; want untrusted, revoked and refused (the account is locked)", name, d)
		}
	}
	if r := postLogin(hA, "alice", "right", addr, laptop); r.code != 429 || r.cookie == nil || r.cookie.MaxAge >= 0 {
		t.Fatalf("alice with her revoked cookie through A: %v, cookie %+v; want 429 and the cookie deleted", r, r.cookie)
	}

	// Bob trusts 3 devices, through A and B; RevokeDevices on A revokes
	// them all for B too; a later login is trusted by both.
	var old []*http.Cookie
	for i, h := range []http.Handler{hA, hB, hA} {
		r := postLogin(h, "bob", "right", addr)
		if r.code != 200 || r.cookie == nil || r.cookie.Value == "" {
			t.Fatalf("bob's login %d: %v, cookie %v", i+1, r, r.cookie)
		}
		old = append(old, r.cookie)
	}
	for i, c := range old {
		for name, lo := range map[string]*lockout.Lockout{"A": a, "B": b} {
			if d := look(lo, "bob", c); !d.Trusted || !d.Allowed {
				t.Fatalf("bob's device %d through %s: %+v, want trusted", i+1, name, d)
			}
		}
	}
	if err := a.RevokeDevices(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	for i, c := range old {
		for name, lo := range map[string]*lockout.Lockout{"B": b, "A": a} {
			if d := look(lo, "bob", c); d.Trusted || !d.Revoked || !d.Allowed {
				t.Fatalf("bob's device %d through %s after RevokeDevices: %+v; want untrusted, revoked, counted as an attempt", i+1, name, d)
			}
		}
	}
	// The first device logs in again through B: its old cookie is deleted
	// and a new one set, in that order.
	fresh := postLogin(hB, "bob", "right", addr, old[0])
	if fresh.code != 200 || len(fresh.cookies) != 2 || fresh.cookies[0].MaxAge >= 0 || fresh.cookies[1].Value == "" {
		t.Fatalf("bob's login after RevokeDevices: %v, cookies %v; want 200, the old one deleted, a new one", fresh, fresh.cookies)
	}
	for name, lo := range map[string]*lockout.Lockout{"A": a, "B": b} {
		if d := look(lo, "bob", fresh.cookie); !d.Trusted || !d.Allowed {
			t.Fatalf("bob's new cookie through %s: %+v, want trusted", name, d)
		}
		for i, c := range old {
			if d := look(lo, "bob", c); d.Trusted || !d.Revoked {
				t.Fatalf("bob's device %d through %s after the new login: %+v, want still revoked", i+1, name, d)
			}
		}
	}
}

// TestPasswordSprayingOnRedis: lockout's spraying test on a real
// redis-server, with the figures of memstore: one password tried against
// 200 accounts from 200 addresses passes the per-account and per-IP
// lockouts and is refused by the per-password one after 20 failures;
// another password, and the owners, are not refused. A second password
// sprayed by 200 concurrent requests is refused after 20 too. The store
// holds the password's keyed hash, never the password.
func TestPasswordSprayingOnRedis(t *testing.T) {
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	prefix := redistest.Prefix(t)
	rs, err := redisstore.New(c, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	memFigures := spraying(t, memstore.New())
	if want := "sequential: 20 checked, 180 refused (handler ran 20 times); another password 401; the owner 200; concurrent: 20 checked, 180 refused (handler ran 20 times)"; memFigures != want {
		t.Fatalf("memstore: %s\nwant %s", memFigures, want)
	}
	if figures := spraying(t, rs); figures != memFigures {
		t.Fatalf("Redis: %s\nmemstore: %s", figures, memFigures)
	}
	keys, err := c.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	hash, err := lockout.KeyedHash(spraySecret, bodykey.FormValue("password", bodykey.Exact()))(loginRequest("user000", "Summer2026!", "192.0.2.1:5000"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, k := range keys {
		if strings.Contains(k, "Summer2026") || strings.Contains(k, "Winter2026") {
			t.Fatalf("a key names a password: %q", k)
		}
		if strings.Contains(k, "login-password:"+hash) {
			found++
		}
		if v, err := c.Dump(context.Background(), k).Result(); err == nil && strings.Contains(v, "Summer2026") {
			t.Fatalf("key %q holds the password", k)
		}
	}
	if found == 0 {
		t.Fatalf("no key of the password's keyed hash %s among %d keys", hash, len(keys))
	}
}

var spraySecret = []byte("spraying secret: 32 bytes or more, random in real use")

// spraying runs the spraying scenario on s and describes its figures.
func spraying(t *testing.T, s ratekit.Store) string {
	newLO := func(name string, attempts int64) *lockout.Lockout {
		lo, err := lockout.New(s, lockout.Config{Name: name, Timeout: 5 * time.Second, Windows: []lockout.Window{
			{Scope: name, Attempts: attempts, Window: time.Hour, Block: time.Hour}}})
		if err != nil {
			t.Fatal(err)
		}
		return lo
	}
	account, perIP, perPassword := newLO("login", 5), newLO("login-ip", 50), newLO("login-password", 20)
	var checked atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checked.Add(1)
		checkLogin(w, r)
	})
	h := perIP.Middleware(ratekit.ByIP(), lockout.KeepOnSuccess())(
		perPassword.Middleware(lockout.KeyedHash(spraySecret, bodykey.FormValue("password", bodykey.Exact())), lockout.KeepOnSuccess())(
			account.Middleware(bodykey.FormValue("username"))(handler)))
	addr := func(i int) string { return fmt.Sprintf("198.51.%d.%d:4000", 100+i/250, i%250) }
	tally := func(codes []int) string {
		var passed, refused int
		for i, code := range codes {
			switch code {
			case 401:
				passed++
			case 429:
				refused++
			default:
				t.Fatalf("attempt %d: %d", i+1, code)
			}
		}
		return fmt.Sprintf("%d checked, %d refused", passed, refused)
	}
	codes := make([]int, 200)
	for i := range codes {
		codes[i] = postLogin(h, fmt.Sprintf("user%03d", i), "Summer2026!", addr(i)).code
	}
	figures := fmt.Sprintf("sequential: %s (handler ran %d times)", tally(codes), checked.Load())
	figures += "; another password " + strconv.Itoa(postLogin(h, "user000", "another guess", addr(300)).code)
	figures += "; the owner " + strconv.Itoa(postLogin(h, "user001", "right", addr(301)).code)
	checked.Store(0)
	parallel(200, func(i int) { codes[i] = postLogin(h, fmt.Sprintf("user%03d", 400+i), "Winter2026!", addr(400+i)).code })
	return figures + fmt.Sprintf("; concurrent: %s (handler ran %d times)", tally(codes), checked.Load())
}

// commandCounter counts what a go-redis client sends: commands, and round
// trips (a Process, or a pipeline, however many commands it carries).
type commandCounter struct{ commands, trips atomic.Int64 }

func (h *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.commands.Add(1)
		h.trips.Add(1)
		return next(ctx, cmd)
	}
}
func (h *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.commands.Add(int64(len(cmds)))
		h.trips.Add(1)
		return next(ctx, cmds)
	}
}

// scriptsRun returns the script calls a server has run (INFO
// commandstats: FCALL, EVALSHA, EVAL and their read-only forms).
func scriptsRun(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if ok && (name == "fcall" || name == "fcall_ro" || name == "evalsha" || name == "evalsha_ro" || name == "eval" || name == "eval_ro") {
			calls, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			n += calls
		}
	}
	return n
}

// TestDeviceAttemptRoundTrips counts, on a private redis-server, what one
// login sends to Redis: a failure with a trusted device cookie is one
// command, one round trip, one script call, as a failure without a cookie
// is; a success with the cookie is two (the attempt, then its refund).
func TestDeviceAttemptRoundTrips(t *testing.T) {
	srv := redistest.Private(t)
	counter := &commandCounter{}
	c, stats := srv.NewClient(nil), srv.NewClient(nil)
	t.Cleanup(func() { c.Close(); stats.Close() })
	c.AddHook(counter)
	s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	h := loginHandler(devicesLockout(t, s))
	const addr = "192.0.2.1:5000"
	cookie := postLogin(h, "alice", "right", addr).cookie
	if cookie == nil {
		t.Fatal("no device cookie")
	}
	postLogin(h, "bob", "guess", addr) // every path has run once: the connection is open, the library loaded
	postLogin(h, "alice", "guess", addr, cookie)
	var line []string
	for _, step := range []struct {
		name, password string
		cookie         *http.Cookie
		code           int
		trips          int64
	}{
		{"a failure with the cookie", "guess", cookie, 401, 1},
		{"a failure without", "guess", nil, 401, 1},
		{"a success with the cookie", "right", cookie, 200, 2},
	} {
		commands, trips, scripts := counter.commands.Load(), counter.trips.Load(), scriptsRun(t, stats)
		if r := postLogin(h, "alice", step.password, addr, cookieList(step.cookie)...); r.code != step.code {
			t.Fatalf("%s: %v, want %d", step.name, r, step.code)
		}
		commands, trips, scripts = counter.commands.Load()-commands, counter.trips.Load()-trips, scriptsRun(t, stats)-scripts
		if commands != step.trips || trips != step.trips || scripts != step.trips {
			t.Fatalf("%s: %d commands in %d round trips, %d script calls; want %d of each", step.name, commands, trips, scripts, step.trips)
		}
		line = append(line, fmt.Sprintf("%s: %d command, %d round trip, %d script call", step.name, commands, trips, scripts))
	}
	t.Log(strings.Join(line, "; "))
}
