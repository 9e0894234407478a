package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// scanAll returns every key of one node under prefix.
func scanAll(c *redis.Client, prefix string) ([]string, error) {
	var out []string
	var cursor uint64
	for {
		keys, next, err := c.Scan(context.Background(), cursor, prefix+":*", 1000).Result()
		if err != nil {
			return nil, err
		}
		out = append(out, keys...)
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// pttls returns the PTTL of every key, pipelined.
func pttls(c *redis.Client, keys []string) ([]time.Duration, error) {
	out := make([]time.Duration, 0, len(keys))
	for start := 0; start < len(keys); start += 1000 {
		cmds, err := c.Pipelined(context.Background(), func(p redis.Pipeliner) error {
			for _, k := range keys[start:min(start+1000, len(keys))] {
				p.PTTL(context.Background(), k)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, cmd := range cmds {
			out = append(out, cmd.(*redis.DurationCmd).Val())
		}
	}
	return out, nil
}

// keyTTLs returns every key under prefix on every master, with its PTTL.
func keyTTLs(t *testing.T, tg target, prefix string) map[string]time.Duration {
	t.Helper()
	out := map[string]time.Duration{}
	for _, m := range tg.masters() {
		keys, err := scanAll(m, prefix)
		if err == nil {
			var ttls []time.Duration
			if ttls, err = pttls(m, keys); err == nil {
				for i, k := range keys {
					out[k] = ttls[i]
				}
			}
		}
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
