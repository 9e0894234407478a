package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of three masters for tests.
type Cluster struct {
	Addrs []string
	procs []*process
}

// NewClient returns a cluster client with ContextTimeoutEnabled set, as
// redisstore.New requires, and AutoPipelineOptions unless opts set their
// own (pipelining); opts may be nil.
// The caller closes it.
func (c *Cluster) NewClient(opts *redis.ClusterOptions) *redis.ClusterClient {
	o := redis.ClusterOptions{}
	if opts != nil {
		o = *opts
	}
	o.ContextTimeoutEnabled = true
	if o.AutoPipelineOptions == nil {
		o.AutoPipelineOptions = pipelining()
	}
	return c.NewClientAsGiven(&o)
}

// NewClientAsGiven is NewClient without the default: opts are used as given
// (only Addrs is set), so ContextTimeoutEnabled stays false unless opts set
// it, as in tests of a client redisstore.New rejects. The caller closes it.
func (c *Cluster) NewClientAsGiven(opts *redis.ClusterOptions) *redis.ClusterClient {
	o := redis.ClusterOptions{}
	if opts != nil {
		o = *opts
	}
	o.Addrs = c.Addrs
	return redis.NewClusterClient(&o)
}

// Masters returns one client per master node (ContextTimeoutEnabled set),
// for SCAN and INFO; the caller closes them.
func (c *Cluster) Masters() []*redis.Client {
	out := make([]*redis.Client, len(c.Addrs))
	for i, a := range c.Addrs {
		out[i] = redis.NewClient(&redis.Options{Addr: a, ContextTimeoutEnabled: true})
	}
	return out
}

// StartCluster returns the test binary's shared cluster: REDIS_CLUSTER_ADDRS
// (comma-separated) when set, else three private redis-server masters joined
// with redis-cli --cluster create. Without the binaries it fails when
// Required and skips with a notice otherwise.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if cluster == nil && clusterErr == nil {
		cluster, clusterErr = startCluster()
	}
	if clusterErr != nil {
		if _, missing := clusterErr.(missingBinary); missing && !Required() {
			t.Skipf("redistest: %v; the cluster tests need it (they run in CI)", clusterErr)
		}
		t.Fatalf("redistest: %v", clusterErr)
	}
	return cluster
}

type missingBinary struct{ error }

func startCluster() (*Cluster, error) {
	if addrs := os.Getenv("REDIS_CLUSTER_ADDRS"); addrs != "" {
		return &Cluster{Addrs: strings.Split(addrs, ",")}, nil
	}
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, missingBinary{fmt.Errorf("%s is not on PATH", bin)}
		}
	}
	var lastErr error
	for range 3 {
		c, err := tryCluster()
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func tryCluster() (*Cluster, error) {
	procs, err := createCluster(3, 0, "--cluster-node-timeout", "2000")
	if err != nil {
		return nil, err
	}
	c := &Cluster{procs: procs}
	for _, p := range procs {
		c.Addrs = append(c.Addrs, p.addr)
	}
	if err := c.waitOK(15 * time.Second); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// createCluster starts n cluster-enabled redis-servers, each in its own
// directory (so its own nodes.conf) on a loopback port whose cluster bus port
// (port+10000) was free too, with the extra arguments, and joins them with
// redis-cli --cluster create, replicas replicas per master. On failure it
// stops the servers it started.
func createCluster(n, replicas int, extra ...string) ([]*process, error) {
	var procs []*process
	stop := func() {
		for _, p := range procs {
			p.stop()
		}
	}
	args := []string{"--cluster", "create"}
	for range n {
		port, err := freePort(true)
		if err != nil {
			stop()
			return nil, err
		}
		p, err := startProcess(port, append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"}, extra...)...)
		if err != nil {
			stop()
			return nil, err
		}
		procs = append(procs, p)
		args = append(args, p.addr)
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, tail(out))
	}
	return procs, nil
}

// waitOK waits until every node reports cluster_state:ok and a cluster client
// can reach every slot's master.
func (c *Cluster) waitOK(limit time.Duration) error {
	if err := poll(limit, 100*time.Millisecond, c.check); err != nil {
		return fmt.Errorf("redistest: cluster not ready: %w", err)
	}
	return nil
}

func (c *Cluster) check() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, m := range c.Masters() {
		info, err := m.ClusterInfo(ctx).Result()
		m.Close()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster_state not ok", m.Options().Addr)
		}
	}
	cc := c.NewClient(nil)
	defer cc.Close()
	return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.Ping(ctx).Err()
	})
}

func (c *Cluster) stop() {
	for _, p := range c.procs {
		p.stop()
	}
}
