package redisstore_test

import (
	"context"
	"github.com/ratekit/ratekit/store/storetest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/redisstore"
)

// minimalACL is the README's ACL for a store under the prefix "app".
const minimalACL = "~app:* -@all +@connection +@read +@write +@scripting +time -@dangerous"

// TestPingACL: with a real ACL user on a redis-server of its own, Ping
// passes only when the user can decide, and otherwise names the fix: the
// key pattern, the commands that run the store's program, or the commands
// that program runs. The README's minimal ACL passes Ping and decides with
// every algorithm, a lockout and a reset.
func TestPingACL(t *testing.T) {
	srv := redistest.Private(t)
	admin := srv.NewClient(nil)
	t.Cleanup(func() { admin.Close() })
	ctx := context.Background()
	cases := []struct {
		name, rules string
		want        []string // in the error; none: Ping passes
	}{
		{"minimal", minimalACL, nil},
		{"other keys", "~other:* +@all", []string{"~app:*"}},
		{"no scripting", "~app:* +@all -@scripting", []string{"+fcall", "+evalsha"}},
		{"no reads", "~app:* +@all -@read", []string{"+@read", "+@write"}},
		{"no writes", "~app:* +@all -@write +del +function|load", []string{"+@read", "+@write"}},
		{"one command short", "~app:* +@all -zrangebyscore", []string{"ZRANGEBYSCORE"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			user := "u" + strconv.Itoa(i)
			args := []any{"ACL", "SETUSER", user, "reset", "on", ">pw"}
			for _, r := range strings.Fields(c.rules) {
				args = append(args, r)
			}
			if err := admin.Do(ctx, args...).Err(); err != nil {
				t.Fatal(err)
			}
			if err := admin.Do(ctx, "FUNCTION", "FLUSH").Err(); err != nil { // each user loads the library anew
				t.Fatal(err)
			}
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw", ContextTimeoutEnabled: true, MaxRetries: -1})
			t.Cleanup(func() { client.Close() })
			s, err := redisstore.New(client, redisstore.WithPrefix("app"))
			if err != nil {
				t.Fatal(err)
			}
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			err = s.Ping(pctx)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Ping: %v", err)
				}
				decideWithEveryAlgorithm(t, s)
				return
			}
			if err == nil {
				t.Fatal("Ping passed, yet the user cannot decide")
			}
			t.Logf("Ping: %v", err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Ping: %v\nwant it to name %q", err, w)
				}
			}
		})
	}
}

// decideWithEveryAlgorithm takes, peeks and resets with every algorithm and
// a lockout on s, and fails on any error.
func decideWithEveryAlgorithm(t *testing.T, s *redisstore.Store) {
	t.Helper()
	ctx := context.Background()
	limits := append(redistest.ExactLimits(), ratekit.FixedWindow(5, time.Minute).Block(time.Minute).Named("blocked"))
	for _, l := range limits {
		for range 7 {
			if _, err := storetest.Take(ctx, s, "subject", []ratekit.Limit{l}, 1); err != nil {
				t.Fatalf("Take %s: %v", l.Name(), err)
			}
		}
		if _, err := storetest.Peek(ctx, s, "subject", []ratekit.Limit{l}); err != nil {
			t.Fatalf("Peek %s: %v", l.Name(), err)
		}
	}
	if err := storetest.Reset(ctx, s, "subject", limits); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	lo, err := lockout.New(s, lockout.Config{Name: "login", Windows: []lockout.Window{{Scope: "w", Attempts: 2, Window: time.Minute, Block: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := lo.Attempt(ctx, "alice"); err != nil {
			t.Fatalf("lockout Attempt: %v", err)
		}
	}
	if err := lo.Reset(ctx, "alice"); err != nil {
		t.Fatalf("lockout Reset: %v", err)
	}
}
