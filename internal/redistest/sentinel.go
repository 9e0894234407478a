package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name the Sentinel harness monitors its master by.
const SentinelMaster = "ratekit"

// Sentinel is a master, two replicas and three sentinels of a test's own,
// on loopback, stopped by PID when the test ends.
type Sentinel struct {
	// Sentinels are the sentinels' addresses, for FailoverOptions.
	Sentinels []string
	data      []*process // the master first, then the replicas
	watchers  []*process
}

// StartSentinel starts a master, two replicas of it and three sentinels
// (quorum 2, down-after 1 s, failover timeout 5 s) for t alone, and waits
// until the sentinels see both replicas. Without redis-server it fails when
// Required and skips with a notice otherwise.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if Required() {
			t.Fatalf("redistest: RATEKIT_REQUIRE_REDIS=1 but redis-server is not on PATH: %v", err)
		}
		t.Skip("redistest: " + errNoServer.Error())
	}
	s := &Sentinel{}
	t.Cleanup(s.stop)
	start := func(extra ...string) *process {
		port, err := freePort(false)
		if err != nil {
			t.Fatal(err)
		}
		p, err := startProcess(port, extra...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	master := start("--repl-diskless-sync-delay", "0")
	s.data = append(s.data, master)
	host, port, _ := net.SplitHostPort(master.addr)
	for range 2 {
		s.data = append(s.data, start("--replicaof", host, port, "--repl-diskless-sync-delay", "0"))
	}
	for range 3 {
		p, err := startSentinel(master.addr)
		if err != nil {
			t.Fatal(err)
		}
		s.watchers = append(s.watchers, p)
		s.Sentinels = append(s.Sentinels, p.addr)
	}
	if err := s.waitReplicas(2, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.waitSynced(master.addr, 2, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitSynced waits until the master at addr has n replicas online.
func (s *Sentinel) waitSynced(addr string, n int, limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	return poll(limit, 50*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		info, err := c.Info(ctx, "replication").Result()
		if err == nil && strings.Count(info, "state=online") < n {
			err = fmt.Errorf("redistest: the master %s has not %d replicas online after %s: %s", addr, n, limit, info)
		}
		return err
	})
}

// startSentinel starts a sentinel monitoring master on a free port, from a
// configuration file of its own (a sentinel rewrites it).
func startSentinel(master string) (*process, error) {
	port, err := freePort(false)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ratekit-sentinel-")
	if err != nil {
		return nil, err
	}
	host, mport, _ := net.SplitHostPort(master)
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
		"sentinel monitor %s %s %s 2\nsentinel down-after-milliseconds %[4]s 1000\n"+
		"sentinel failover-timeout %[4]s 5000\nsentinel parallel-syncs %[4]s 1\n",
		port, dir, filepath.Join(dir, "redis.log"), SentinelMaster, host, mport)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return launch(dir, port, conf, "--sentinel")
}

// NewClient returns a go-redis failover client of the master with
// ContextTimeoutEnabled set, as redisstore.New requires; opts may be nil.
// The caller closes it.
func (s *Sentinel) NewClient(opts *redis.FailoverOptions) *redis.Client {
	o := redis.FailoverOptions{}
	if opts != nil {
		o = *opts
	}
	o.MasterName, o.SentinelAddrs, o.ContextTimeoutEnabled = SentinelMaster, s.Sentinels, true
	return redis.NewFailoverClient(&o)
}

// Master returns the address that most sentinels name as the master (a
// sentinel that did not lead a failover learns of it a moment later).
func (s *Sentinel) Master(ctx context.Context) (string, error) {
	votes := map[string]int{}
	var last error
	for _, addr := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
		hp, err := c.GetMasterAddrByName(ctx, SentinelMaster).Result()
		c.Close()
		if err == nil && len(hp) == 2 {
			votes[net.JoinHostPort(hp[0], hp[1])]++
		} else {
			last = err
		}
	}
	for addr, n := range votes {
		if n > len(s.Sentinels)/2 {
			return addr, nil
		}
	}
	return "", fmt.Errorf("redistest: no master named by most sentinels: %v (%v)", votes, last)
}

// WaitNewMaster waits until most sentinels name a master other than old,
// and returns it.
func (s *Sentinel) WaitNewMaster(ctx context.Context, old string, limit time.Duration) (string, error) {
	var addr string
	err := poll(limit, 50*time.Millisecond, func() error {
		var err error
		if addr, err = s.Master(ctx); err == nil && addr == old {
			err = fmt.Errorf("redistest: the sentinels still name %s %s after it went", old, limit)
		}
		return err
	})
	return addr, err
}

// KillMaster kills the current master's process (SIGKILL) and returns its
// address.
func (s *Sentinel) KillMaster(ctx context.Context) (string, error) {
	addr, err := s.Master(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range s.data {
		if p.addr == addr {
			if err := p.cmd.Process.Kill(); err != nil {
				return "", err
			}
			<-p.done
			return addr, nil
		}
	}
	return "", fmt.Errorf("redistest: the master %s is not one of the harness's servers", addr)
}

// waitReplicas waits until the first sentinel sees n replicas of the master
// that are up.
func (s *Sentinel) waitReplicas(n int, limit time.Duration) error {
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinels[0], MaxRetries: -1})
	defer c.Close()
	return poll(limit, 100*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		reps, err := c.Replicas(ctx, SentinelMaster).Result()
		up := 0
		for _, r := range reps {
			if r["flags"] == "slave" {
				up++
			}
		}
		if err == nil && up < n {
			err = fmt.Errorf("redistest: %d of %d replicas seen by the sentinels after %s: %v", up, n, limit, reps)
		}
		return err
	})
}

// stop kills every process of the harness by its PID.
func (s *Sentinel) stop() {
	for _, p := range append(s.watchers, s.data...) {
		select {
		case <-p.done:
			os.RemoveAll(p.dir)
		default:
			p.stop()
		}
	}
}
