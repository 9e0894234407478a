package rueidisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit/store/redisstore/redistest"
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
// each held by a different master.
func TestPingEveryMaster(t *testing.T) {
	targets(t, func(t *testing.T, addrs []string) {
		c := newClient(t, addrs...)
		s := newStore(t, c, redistest.Prefix(t))
		ctx := context.Background()
		if err := s.Ping(ctx); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		subs := rueidisstore.ProbeSubjects(ctx, s)
		masters := map[int64]bool{}
		for _, sub := range subs {
			slot, err := c.Do(ctx, c.B().ClusterKeyslot().Key("{"+sub+"}").Build()).AsInt64()
			if err != nil { // standalone
				slot = -1
			}
			masters[slot] = true
		}
		want := 1
		if len(addrs) > 1 {
			want = 3
		}
		if len(subs) != want || len(masters) != want {
			t.Fatalf("probe subjects %v (%d slots), want %d, one per master", subs, len(masters), want)
		}
	})
}
