package rueidisstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

// TestPingACL: with real ACL users on a redis-server of its own, Ping
// passes with the README's least ACL and names the fix when the user may
// not use the store's keys or run its program.
func TestPingACL(t *testing.T) {
	srv := redistest.Private(t)
	admin := srv.NewClient(nil)
	t.Cleanup(func() { admin.Close() })
	ctx := context.Background()
	for i, c := range []struct{ rules, want string }{
		{"~app:* -@all +@connection +@read +@write +@scripting +time -@dangerous", ""},
		{"~other:* +@all", "~app:*"},
		{"~app:* +@all -@scripting", "+fcall"},
	} {
		user := "r" + string(rune('a'+i))
		args := []any{"ACL", "SETUSER", user, "reset", "on", ">pw"}
		for _, r := range strings.Fields(c.rules) {
			args = append(args, r)
		}
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
		opt := rueidisstore.ClientOption(srv.Addr)
		opt.Username, opt.Password = user, "pw"
		client, err := rueidis.NewClient(opt)
		if err != nil {
			t.Fatal(err)
		}
		s, err := rueidisstore.New(client, rueidisstore.WithPrefix("app"))
		if err != nil {
			t.Fatal(err)
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = s.Ping(pctx)
		cancel()
		client.Close()
		switch {
		case c.want == "" && err != nil:
			t.Fatalf("%s: Ping: %v", c.rules, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Fatalf("%s: Ping: %v, want it to name %q", c.rules, err, c.want)
		}
	}
}

// TestPingEveryMaster: Ping decides about one probe subject per master,
// each held by a different master: once a first Ping has loaded the library,
// a second runs on each master of a cluster as many script calls as on a
// standalone server, where it probes one subject.
func TestPingEveryMaster(t *testing.T) {
	one := pingCalls(t, []string{redistest.Standalone(t).Addr})
	if one[0] == 0 {
		t.Fatal("Ping ran no script call on a standalone server")
	}
	if each := pingCalls(t, redistest.StartCluster(t).Addrs); slices.ContainsFunc(each, func(n float64) bool { return n != one[0] }) {
		t.Fatalf("script calls of a Ping per master: %v, want %v on each (one probe subject per master, as on a standalone server)", each, one[0])
	}
}

// pingCalls pings a store on the masters at addrs twice and returns the
// script calls each master ran for the second Ping.
func pingCalls(t *testing.T, addrs []string) []float64 {
	t.Helper()
	s := newStore(t, newClient(t, addrs...), redistest.Prefix(t))
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	out := make([]float64, len(addrs))
	for i, a := range addrs {
		out[i], _ = redistest.ScriptCPU(a)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	for i, a := range addrs {
		n, _ := redistest.ScriptCPU(a)
		out[i] = n - out[i]
	}
	return out
}
