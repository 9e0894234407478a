package integration_test

import (
	"bufio"
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/redisstore"
)

// leaseChildEnv holds "addr prefix" in the process TestLeaseKill starts:
// the test binary itself, run as one more instance of the service.
const leaseChildEnv = "RATEKIT_LEASE_CHILD"

// The limit TestLeaseKill's instances share, and their MaxLease.
const killQuota, killMaxLease, killWindow = 1000, 100, 4 * time.Second

func killLimits() []ratekit.Limit {
	return []ratekit.Limit{ratekit.FixedWindow(killQuota, killWindow).Named("global")}
}

// leaseChild is the instance that dies: it takes decisions until it holds
// a lease, prints what it admitted and holds, and waits to be killed.
func leaseChild() int {
	addr, prefix, _ := strings.Cut(os.Getenv(leaseChildEnv), " ")
	c := (&redistest.Server{Addr: addr}).NewClient(nil)
	rs, err := redisstore.New(c, redisstore.WithPrefix(prefix))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	// At the refill interval of an hour, the second lease is MaxLease.
	s, err := lease.New(rs, killLimits(), lease.WithMaxLease(killMaxLease), lease.WithRefillInterval(time.Hour))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	var admitted int64
	for s.Stats().Held == 0 {
		d, err := storetest.Take(context.Background(), s, "all", killLimits(), 1)
		if err != nil || !d.Allowed {
			fmt.Println("error:", d, err)
			return 1
		}
		admitted++
	}
	fmt.Printf("admitted=%d held=%d\n", admitted, s.Stats().Held)
	_, _ = io.Copy(io.Discard, os.Stdin) // until SIGKILL, or the test's end closes stdin
	return 1
}

// TestLeaseKill starts an instance in a process of its own (this test
// binary), which takes a lease of the shared limit (1,000 per 4 s window)
// from the real redis-server, and kills it with SIGKILL while it holds
// the lease. The 3 other instances keep deciding without an error until
// each is refused; the window then admitted exactly 1,000 less the units
// the dead instance held, which are at most MaxLease: the bound. The next
// window admits all 1,000 again.
func TestLeaseKill(t *testing.T) {
	srv := redistest.Standalone(t)
	prefix := redistest.Prefix(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaseChildEnv+"="+srv.Addr+" "+prefix)
	stdin, err := cmd.StdinPipe() // closed when this process ends, however it ends: the child then exits
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child instance: %v", err)
	}
	var childAdmitted, childHeld int64
	if _, err := fmt.Sscanf(line, "admitted=%d held=%d", &childAdmitted, &childHeld); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child instance said %q", line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child instance ended with %v, want killed by SIGKILL", err)
	}
	if childHeld < 1 || childHeld > killMaxLease {
		t.Fatalf("the killed instance held %d units, want 1 to MaxLease (%d)", childHeld, killMaxLease)
	}

	limits := killLimits()
	stores := leaseInstances(t, 3, func() redis.UniversalClient { return srv.NewClient(nil) }, prefix, limits, lease.WithMaxLease(killMaxLease))
	burst := func() *tally {
		var tl tally
		var wg sync.WaitGroup
		for _, s := range stores {
			hammer(s, "all", limits, -1, &tl, &wg)
		}
		wg.Wait()
		if tl.errs.Load() > 0 {
			t.Fatalf("%d errors while the others decided", tl.errs.Load())
		}
		return &tl
	}
	tl := burst()
	if took := time.Since(start); took > killWindow*3/4 {
		t.Fatalf("the window's decisions took %s, too long to lie in one window of %s", took, killWindow)
	}
	admitted := childAdmitted + tl.admitted.Load()
	t.Logf("the killed instance admitted %d and held %d; the others admitted %d", childAdmitted, childHeld, tl.admitted.Load())
	if admitted != killQuota-childHeld {
		t.Fatalf("the window admitted %d, want exactly %d − %d held by the killed instance", admitted, killQuota, childHeld)
	}
	admin := srv.NewClient(nil)
	defer admin.Close()
	rs, err := redisstore.New(admin, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	debited, left := sharedWindow(t, rs, "all", limits[0])
	if debited != killQuota {
		t.Fatalf("Redis debited %d, want %d", debited, killQuota)
	}

	time.Sleep(left + 5*time.Millisecond) // the window's end
	if tl := burst(); tl.admitted.Load() != killQuota {
		t.Fatalf("the next window admitted %d, want all %d", tl.admitted.Load(), killQuota)
	}
}
