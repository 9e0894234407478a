package redisstore_test

import (
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
)

// TestFunctionsSurviveFailover: the library the store loads on every master
// reaches the replicas by replication, so after a master is killed its
// promoted replica runs the store's calls without loading anything, and no
// count is lost (no write was in flight).
func TestFunctionsSurviveFailover(t *testing.T) {
	ctx := context.Background()
	cluster := redistest.StartReplicated(t)
	opts := recommendedClusterOptions()
	client := cluster.NewClient(&opts)
	t.Cleanup(func() { client.Close() })
	s := newStore(t, client, redistest.Prefix(t))
	limits := []ratekit.Limit{ratekit.FixedWindow(1000, time.Hour), ratekit.GCRA(1000, time.Hour, 1000)}
	subject := func(i int) string { return fmt.Sprintf("fn-subject-%03d", i) }
	const subjects = 60
	for i := range subjects {
		take(t, s, subject(i), limits, 1)
	}
	shards, err := cluster.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := shards[0]
	replica := redis.NewClient(&redis.Options{Addr: victim.Replica, ContextTimeoutEnabled: true})
	t.Cleanup(func() { replica.Close() })
	deadline := time.Now().Add(5 * time.Second)
	for { // replication is asynchronous
		libs, err := replica.FunctionList(ctx, redis.FunctionListQuery{}).Result()
		if err == nil && len(libs) == 1 && strings.HasPrefix(libs[0].Name, "ratekit_") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica %s has no ratekit library: %+v %v", victim.Replica, libs, err)
		}
		time.Sleep(20 * time.Millisecond) // polling replication, not a race
	}
	loads := commandCalls(t, replica)["function|load"] // the master's load, replicated
	if _, err := cluster.Kill(victim.Master); err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := cluster.WaitPromoted(pctx, victim.Replica); err != nil {
		t.Fatal(err)
	}
	// Calls for the dead shard fail until the client learns the new master;
	// then every call decides, and each subject has its one earlier charge.
	deadline = time.Now().Add(10 * time.Second)
	for i := 0; i < subjects; {
		d, err := storetest.Take(ctx, s, subject(i), limits, 1)
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v, 10 s after the promotion", subject(i), err)
			}
			time.Sleep(20 * time.Millisecond) // waiting out the client's slot-map reload
			continue
		}
		if !d.Allowed || d.States[0].Remaining != 998 {
			t.Fatalf("%s after the failover: %+v; want admitted with 998 left", subject(i), d)
		}
		i++
	}
	if n := commandCalls(t, replica)["function|load"] - loads; n != 0 {
		t.Fatalf("the library was loaded %d times on the promoted replica; want 0 (it came by replication)", n)
	}
}
