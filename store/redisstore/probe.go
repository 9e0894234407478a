package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit/store/redisengine"
)

// probe asks, for Ping, for a decision that changes nothing on every node
// the client routes to: a Peek of every built-in algorithm about a probe
// subject, then a Reset of its keys (which do not exist), so that the
// store's keys, its program and the commands inside it are all tried. An
// access-control refusal comes back with its fix (redisengine.PermissionHint).
func (s *Store) probe(ctx context.Context) error {
	limits := redisengine.ProbeLimits()
	for _, sub := range s.probeSubjects(ctx) {
		_, err := s.Peek(ctx, sub, limits)
		if err == nil {
			err = s.Reset(ctx, sub, limits)
		}
		if err != nil {
			if hint := redisengine.PermissionHint(err, s.eng.Prefix()); hint != "" {
				return fmt.Errorf("ratekit: redisstore: Redis refuses the store's calls: %s (%w)", hint, err)
			}
			return fmt.Errorf("ratekit: redisstore: a probe decision failed: %w", err)
		}
	}
	return nil
}

// probeSubjects returns one probe subject per master of a cluster client,
// per shard of a ring, or one for any other client. A subject is its own
// hash tag (it is short and has no braces), so "{subject}" routes as its keys do.
func (s *Store) probeSubjects(ctx context.Context) []string {
	owner := func(key string) string { return "" }
	nodes := 1
	switch c := s.proc.(type) {
	case *redis.ClusterClient:
		var masters atomic.Int64 // ForEachMaster calls its function concurrently
		_ = c.ForEachMaster(ctx, func(context.Context, *redis.Client) error { masters.Add(1); return nil })
		nodes = int(masters.Load())
		owner = func(key string) string {
			m, err := c.MasterForKey(ctx, key)
			if err != nil {
				return ""
			}
			return m.Options().Addr
		}
	case *redis.Ring:
		nodes = len(c.Options().Addrs)
		owner = func(key string) string {
			sh, err := c.GetShardClientForKey(key)
			if err != nil {
				return ""
			}
			return sh.Options().Addr
		}
	}
	seen := map[string]bool{}
	var subjects []string
	for i := 0; len(seen) < nodes && i < 64*nodes; i++ {
		sub := redisengine.ProbeSubject + "-" + strconv.Itoa(i)
		if o := owner("{" + sub + "}"); !seen[o] {
			seen[o] = true
			subjects = append(subjects, sub)
		}
	}
	return subjects
}
