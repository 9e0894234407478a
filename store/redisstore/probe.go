package redisstore

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit/store/redisengine"
)

// probeSubjects returns one probe subject per master of a cluster client,
// per shard of a ring, or one for any other client.
func (s *Store) probeSubjects(ctx context.Context) []string {
	owner := func(key string) string { return "" }
	nodes := 1
	switch c := s.proc.(type) {
	case *redis.ClusterClient:
		var masters atomic.Int64 // ForEachMaster calls its function concurrently
		_ = c.ForEachMaster(ctx, func(context.Context, *redis.Client) error { masters.Add(1); return nil })
		nodes = max(int(masters.Load()), 1) // none listed: the probe still tries one
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
		sub := redisengine.ProbeSubject(i)
		if o := owner("{" + sub + "}"); !seen[o] {
			seen[o] = true
			subjects = append(subjects, sub)
		}
	}
	return subjects
}
