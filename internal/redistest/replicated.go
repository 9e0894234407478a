package redistest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Replicated is a Redis Cluster of three masters with one replica each that
// one test owns, for failover tests: the test may kill a master (Kill) and
// wait for its replica to take over (WaitPromoted). Its nodes stop, by PID,
// when the test ends.
type Replicated struct {
	Addrs       []string      // every node, masters and replicas
	NodeTimeout time.Duration // cluster-node-timeout: how long a silent master has before it is failed over
	procs       map[string]*process
}

// Shard is a master, its replica and the slots they serve.
type Shard struct {
	Master, Replica string
	Slots           [][2]int // inclusive ranges
}

// Has reports whether the shard serves slot.
func (s Shard) Has(slot int) bool {
	for _, r := range s.Slots {
		if r[0] <= slot && slot <= r[1] {
			return true
		}
	}
	return false
}

// replicatedNodeTimeout is short so that a killed master's replica takes
// over within about three seconds; a shorter one would risk failovers that
// no test asked for on a busy machine.
const replicatedNodeTimeout = 1500 * time.Millisecond

// StartReplicated starts six private redis-server nodes on random loopback
// ports (each in its own directory, with its own nodes.conf, and its cluster
// bus port, port+10000, left free), joins them with redis-cli --cluster
// create --cluster-replicas 1, and waits until every node reports
// cluster_state:ok and every master has a replica in sync. extra are more
// configuration arguments for every node (e.g.
// "--cluster-require-full-coverage", "no"). Without redis-server or
// redis-cli it skips with a notice, or fails when Required.
func StartReplicated(t testing.TB, extra ...string) *Replicated {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if Required() {
				t.Fatalf("redistest: RATEKIT_REQUIRE_REDIS=1 but %s is not on PATH: %v", bin, err)
			}
			t.Skipf("redistest: %s is not on PATH; the failover tests need redis-server and redis-cli (they run in CI)", bin)
		}
	}
	var lastErr error
	for range 3 {
		c, err := tryReplicated(extra)
		if err == nil {
			t.Cleanup(c.stop)
			return c
		}
		lastErr = err
	}
	t.Fatalf("redistest: replicated cluster: %v", lastErr)
	return nil
}

func tryReplicated(extra []string) (*Replicated, error) {
	procs, err := createCluster(6, 1, append([]string{
		"--cluster-node-timeout", strconv.Itoa(int(replicatedNodeTimeout.Milliseconds())),
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", // replicas sync at once, not 5 s later
	}, extra...)...)
	if err != nil {
		return nil, err
	}
	c := &Replicated{NodeTimeout: replicatedNodeTimeout, procs: map[string]*process{}}
	for _, p := range procs {
		c.Addrs = append(c.Addrs, p.addr)
		c.procs[p.addr] = p
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.ready()
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("not ready: %w", err)
		}
		time.Sleep(100 * time.Millisecond) // polling the cluster's gossip and replication, not a test race
	}
}

// NewClient returns a cluster client of every node with ContextTimeoutEnabled
// set, as redisstore.New requires; opts may be nil. The caller closes it.
func (c *Replicated) NewClient(opts *redis.ClusterOptions) *redis.ClusterClient {
	o := redis.ClusterOptions{}
	if opts != nil {
		o = *opts
	}
	o.ContextTimeoutEnabled = true
	o.Addrs = slices.Clone(c.Addrs)
	return redis.NewClusterClient(&o)
}

// Shards returns the shards as the first node that answers sees them, in the
// order of their first slot.
func (c *Replicated) Shards(ctx context.Context) ([]Shard, error) {
	var lastErr error
	for _, addr := range c.Addrs {
		if !c.alive(addr) {
			continue
		}
		shards, err := c.shardsOf(ctx, addr)
		if err == nil {
			return shards, nil
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = errors.New("no node is alive")
	}
	return nil, lastErr
}

func (c *Replicated) shardsOf(ctx context.Context, addr string) ([]Shard, error) {
	n := node(addr)
	defer n.Close()
	slots, err := n.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("%s: CLUSTER SLOTS: %w", addr, err)
	}
	byMaster := map[string]*Shard{}
	var shards []*Shard
	for _, s := range slots {
		if len(s.Nodes) == 0 {
			return nil, fmt.Errorf("%s: slots %d-%d have no node", addr, s.Start, s.End)
		}
		m := s.Nodes[0].Addr
		sh := byMaster[m]
		if sh == nil {
			sh = &Shard{Master: m}
			byMaster[m] = sh
			shards = append(shards, sh)
		}
		if len(s.Nodes) > 1 {
			sh.Replica = s.Nodes[1].Addr
		}
		sh.Slots = append(sh.Slots, [2]int{int(s.Start), int(s.End)})
	}
	out := make([]Shard, 0, len(shards))
	for _, sh := range shards {
		slices.SortFunc(sh.Slots, func(a, b [2]int) int { return a[0] - b[0] })
		out = append(out, *sh)
	}
	slices.SortFunc(out, func(a, b Shard) int { return a.Slots[0][0] - b.Slots[0][0] })
	return out, nil
}

// ready checks that every node is in cluster_state:ok and knows six nodes
// with no failure flag, that CLUSTER SLOTS on every node shows three masters
// covering every slot with a replica each, and that every replica's link to
// its master is up and synced.
func (c *Replicated) ready() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, addr := range c.Addrs {
		n := node(addr)
		err := func() error {
			info, err := n.ClusterInfo(ctx).Result()
			if err != nil {
				return err
			}
			for _, want := range []string{"cluster_state:ok", "cluster_slots_ok:16384", "cluster_known_nodes:6"} {
				if !strings.Contains(info, want) {
					return fmt.Errorf("CLUSTER INFO lacks %s", want)
				}
			}
			nodes, err := n.ClusterNodes(ctx).Result()
			if err != nil {
				return err
			}
			if strings.Contains(nodes, "fail") || strings.Contains(nodes, "handshake") || strings.Contains(nodes, "noaddr") {
				return fmt.Errorf("CLUSTER NODES: %s", nodes)
			}
			shards, err := c.shardsOf(ctx, addr)
			if err != nil {
				return err
			}
			if len(shards) != 3 {
				return fmt.Errorf("%d masters, want 3", len(shards))
			}
			for _, sh := range shards {
				if sh.Replica == "" {
					return fmt.Errorf("master %s has no replica", sh.Master)
				}
			}
			repl, err := n.Info(ctx, "replication").Result()
			if err != nil {
				return err
			}
			if strings.Contains(repl, "role:slave") &&
				(!strings.Contains(repl, "master_link_status:up") || !strings.Contains(repl, "master_sync_in_progress:0")) {
				return errors.New("replica not in sync")
			}
			if strings.Contains(repl, "role:master") && !strings.Contains(repl, "state=online") {
				return errors.New("master has no replica online")
			}
			return nil
		}()
		n.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", addr, err)
		}
	}
	return nil
}

// Kill sends SIGKILL to the node at addr, by its PID, waits until the process
// has exited, and returns when the signal was sent.
func (c *Replicated) Kill(addr string) (time.Time, error) {
	p := c.procs[addr]
	if p == nil || p.cmd.Process == nil {
		return time.Time{}, fmt.Errorf("redistest: no node at %s", addr)
	}
	at := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return at, fmt.Errorf("redistest: kill redis-server on %s: %w", addr, err)
	}
	select {
	case <-p.done:
		return at, nil
	case <-time.After(5 * time.Second):
		return at, fmt.Errorf("redistest: redis-server on %s still runs 5 s after SIGKILL", addr)
	}
}

// Freeze stops the node at addr (SIGSTOP, by its PID): its connections stay
// open and nothing answers, as with a hung or partitioned node. SIGKILL stops
// it when the test ends.
func (c *Replicated) Freeze(addr string) (time.Time, error) {
	p := c.procs[addr]
	if p == nil || p.cmd.Process == nil {
		return time.Time{}, fmt.Errorf("redistest: no node at %s", addr)
	}
	at := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return at, fmt.Errorf("redistest: freeze redis-server on %s: %w", addr, err)
	}
	return at, nil
}

// WaitPromoted polls ROLE on the node at addr every 10 ms until it reports
// itself a master, and returns when the poll that found it was sent: the
// promotion happened at most 10 ms (and one round trip) earlier.
func (c *Replicated) WaitPromoted(ctx context.Context, addr string) (time.Time, error) {
	n := node(addr)
	defer n.Close()
	for {
		sent := time.Now()
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		role, err := n.Do(pctx, "role").Slice()
		cancel()
		if err == nil && len(role) > 0 && role[0] == "master" {
			return sent, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("redistest: %s not promoted: %w (last ROLE %v, %v)", addr, ctx.Err(), role, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (c *Replicated) alive(addr string) bool {
	p := c.procs[addr]
	if p == nil {
		return true // not ours; let the caller try
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (c *Replicated) stop() {
	for _, p := range c.procs {
		p.stop()
	}
}

// node is a client of one node for the harness's own polls.
func node(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
}
