package redisstore_test

import (
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/internal/redistest"
)

// recommendedClusterOptions are the cluster client settings docs/operations.md
// recommends for the store (ContextTimeoutEnabled is added by NewClient).
func recommendedClusterOptions() redis.ClusterOptions {
	return redis.ClusterOptions{
		DialTimeout:                time.Second,
		DialerRetries:              2,
		ReadTimeout:                time.Second,
		ClusterStateReloadInterval: 5 * time.Second,
	}
}

const (
	failoverWorkers  = 16
	failoverSubjects = 1200
	failoverTimeout  = 100 * time.Millisecond // each call's, the middleware's default
	failoverSlack    = 50 * time.Millisecond  // how much longer than its timeout a call may take
	failoverCanaries = 4                      // goroutines that only wait out the timeout, to measure CPU starvation
)

// TestClusterFailover kills (SIGKILL) one master of a cluster of three
// masters with a replica each (redistest.StartReplicated) while 16 goroutines
// send Takes for 1200 subjects spread over every slot, each call bounded to
// 100 ms, and measures when the replica is promoted and when decisions resume
// for the dead shard's subjects: the end of the first success that started
// after the last failure (a mere timeout, with no sign of the dead node, marks
// a starved machine and is left out; see errKind). They must resume within
// 2 s of the promotion with the recommended client settings and within 5 s
// with go-redis's defaults (plus ContextTimeoutEnabled, which New requires);
// before the store asked the client to reload its slot map, the defaults took
// about 55 s. No call may take longer than its timeout + 50 ms, or, when the
// shared machine starves the test, by twice as much as canaries waiting on
// the same timeout were late near it; no subject's remaining count may rise,
// except once on the dead shard, by the counts that asynchronous replication
// had not yet copied to the replica when its master died.
//
// RATEKIT_FAILOVER_EXPERIMENTS=1 adds cases: a master frozen (SIGSTOP)
// rather than killed, with the recommended settings and with the defaults
// (whose 5 s ReadTimeout can hold a slot-map reload on the frozen node: the
// bound is 7 s), and servers with
// cluster-require-full-coverage no (the other shards keep answering).
func TestClusterFailover(t *testing.T) {
	cases := []failoverCase{
		{name: "recommended", opts: recommendedClusterOptions(), within: 2 * time.Second},
		{name: "defaults", within: 5 * time.Second},
	}
	if os.Getenv("RATEKIT_FAILOVER_EXPERIMENTS") == "1" {
		cases = append(cases,
			failoverCase{name: "recommended-frozen", opts: recommendedClusterOptions(), within: 2 * time.Second, freeze: true},
			failoverCase{name: "defaults-frozen", within: 7 * time.Second, freeze: true}, // a reload may wait out the 5 s ReadTimeout
			failoverCase{name: "recommended-partial-coverage", opts: recommendedClusterOptions(), within: 2 * time.Second,
				extra: []string{"--cluster-require-full-coverage", "no"}},
		)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { failover(t, tc) })
	}
}

// failoverCase is one run of TestClusterFailover.
type failoverCase struct {
	name   string
	opts   redis.ClusterOptions
	within time.Duration // decisions resume at most this long after the promotion
	freeze bool          // SIGSTOP the master (a hung node) instead of SIGKILL
	extra  []string      // server arguments
}

// call is one Take as a worker saw it; times are from the run's start.
type call struct {
	subject    int32
	ok         bool
	slow       bool   // failed on a mere timeout: a stalled machine, not the dead node (see errKind)
	kind       string // of the error (errKind)
	start, end time.Duration
	remaining  int64
}

// stall is a wait on a context with the calls' timeout that ended late: the
// machine (or the test's process) was short of CPU then.
type stall struct{ start, end, late time.Duration }

func failover(t *testing.T, tc failoverCase) {
	ctx := context.Background()
	name, opts, within := tc.name, tc.opts, tc.within
	cluster := redistest.StartReplicated(t, tc.extra...)
	client := cluster.NewClient(&opts)
	t.Cleanup(func() { client.Close() })
	s := newStore(t, client, redistest.Prefix(t))
	limits := []ratekit.Limit{ratekit.FixedWindow(1_000_000, time.Hour)}

	shards, err := cluster.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := shards[0] // its subjects are those of shard 0
	shardOf := make([]int, failoverSubjects)
	perShard := make([]int, len(shards))
	for i := range shardOf {
		keys, err := s.Keys(subjectName(i), limits)
		if err != nil {
			t.Fatal(err)
		}
		slot, err := client.ClusterKeySlot(ctx, keys[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		shardOf[i] = slices.IndexFunc(shards, func(sh redistest.Shard) bool { return sh.Has(int(slot)) })
		if shardOf[i] < 0 {
			t.Fatalf("slot %d of %s is in no shard", slot, keys[0])
		}
		perShard[shardOf[i]]++
	}
	if slices.Contains(perShard, 0) {
		t.Fatalf("subjects per shard %v: every shard needs some", perShard)
	}

	t0 := time.Now()
	since := func(tm time.Time) time.Duration { return tm.Sub(t0) }
	var stop atomic.Bool
	records := make([][]call, failoverWorkers)
	stalls := make([][]stall, failoverCanaries)
	var wg sync.WaitGroup
	for w := range failoverWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				subject := w + failoverWorkers*(n%(failoverSubjects/failoverWorkers)) // each subject has one worker
				cctx, cancel := context.WithTimeout(ctx, failoverTimeout)
				start := time.Now()
				d, err := storetest.Take(cctx, s, subjectName(subject), limits, 1)
				end := time.Now()
				cancel()
				c := call{subject: int32(subject), ok: err == nil, start: since(start), end: since(end), remaining: d.Remaining}
				if err != nil {
					c.kind, c.slow = errKind(err)
				}
				records[w] = append(records[w], c)
				time.Sleep(4 * time.Millisecond) // pace the load: 2 cores are shared
			}
		}()
	}
	for i := range failoverCanaries {
		wg.Add(1)
		go func() { // wait as the calls do, to tell a slow store from a starved process
			defer wg.Done()
			for !stop.Load() {
				cctx, cancel := context.WithTimeout(ctx, failoverTimeout)
				start := time.Now()
				<-cctx.Done()
				end := time.Now()
				cancel()
				if late := end.Sub(start) - failoverTimeout; late > 10*time.Millisecond {
					stalls[i] = append(stalls[i], stall{since(start), since(end), late})
				}
			}
		}()
	}
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			stop.Store(true)
			wg.Wait()
		}
	}
	t.Cleanup(halt)

	time.Sleep(1500 * time.Millisecond) // warm: connections, script caches
	stopMaster := cluster.Kill
	if tc.freeze {
		stopMaster = cluster.Freeze
	}
	killed, err := stopMaster(victim.Master)
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	promoted, err := cluster.WaitPromoted(pctx, victim.Replica)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(promoted.Add(within + time.Second)))
	halt()

	// Failures and resumption. A failure that is a mere timeout (the call's
	// 100 ms passed with no sign of a dead node) marks a stalled machine, not
	// the failover, and does not delay the resumption; the log counts them.
	kill, promo := since(killed), since(promoted) // kill: the time of the SIGKILL (or SIGSTOP)
	var (
		total, failed, deadFailed, otherFailed, slow, failedBeforeKill int
		lastDeadFail1, lastOtherFail                                   time.Duration = -1, -1
		kinds                                                                        = map[string]int{}
	)
	for _, rs := range records {
		for _, c := range rs {
			total++
			if c.ok {
				continue
			}
			failed++
			kinds[c.kind]++
			switch {
			case c.slow && !(tc.freeze && shardOf[c.subject] == 0): // a frozen master's calls time out
				slow++
			case c.end < kill: // a call in flight at the kill may fail
				failedBeforeKill++
			case shardOf[c.subject] == 0:
				lastDeadFail1 = max(lastDeadFail1, c.start)
			default:
				lastOtherFail = max(lastOtherFail, c.start)
			}
			if shardOf[c.subject] == 0 {
				deadFailed++
			} else {
				otherFailed++
			}
		}
	}
	resume := func(dead bool, after time.Duration) time.Duration {
		first := time.Duration(-1)
		for _, rs := range records {
			for _, c := range rs {
				if c.ok && (shardOf[c.subject] == 0) == dead && c.start > after && (first < 0 || c.end < first) {
					first = c.end
				}
			}
		}
		return first
	}
	deadResume, otherResume := resume(true, lastDeadFail1), resume(false, lastOtherFail)

	// Durations. A call may overrun its timeout by failoverSlack, and by
	// twice as much as a canary's wait on the same timeout overran it within
	// a second of the call: when the machine (shared, and the race detector
	// slows the test) starves the process, some goroutines wake later than
	// others. On a machine that is not starved, the bound is the slack.
	var slowest time.Duration
	var unexcused []call
	excused := 0
	for _, rs := range records {
		for _, c := range rs {
			d := c.end - c.start
			slowest = max(slowest, d)
			if d <= failoverTimeout+failoverSlack {
				continue
			}
			var stalled time.Duration
			for _, sts := range stalls {
				for _, st := range sts {
					if st.start < c.end+time.Second && st.end > c.start-time.Second {
						stalled = max(stalled, st.late)
					}
				}
			}
			if d <= failoverTimeout+failoverSlack+2*stalled {
				excused++
				continue
			}
			unexcused = append(unexcused, c)
		}
	}
	maxStall := time.Duration(0)
	for _, sts := range stalls {
		for _, st := range sts {
			maxStall = max(maxStall, st.late)
		}
	}

	// Health once the bound has passed: the dead shard fails no more often
	// than the others do (stalls time out calls on every shard alike).
	var n, bad [2]int // [dead shard, other shards]
	for _, rs := range records {
		for _, c := range rs {
			if c.start > promo+within {
				i := min(shardOf[c.subject], 1)
				n[i]++
				if !c.ok {
					bad[i]++
				}
			}
		}
	}
	rate := func(i int) float64 { return float64(bad[i]) / float64(max(n[i], 1)) }

	// Exactness. Each subject has one worker, so a worker's records of a
	// subject are in call order, and remaining must fall from one success to
	// the next; a call that failed may have been charged, so it may fall by
	// more than one. On the dead shard it may rise once, across the kill: the
	// counts the master had acknowledged but not yet sent to its replica.
	lost, lostCounts, rises := 0, 0, 0
	for _, rs := range records {
		prev := map[int32]call{}
		for _, c := range rs {
			if !c.ok {
				continue
			}
			p, seen := prev[c.subject]
			prev[c.subject] = c
			if !seen || c.remaining < p.remaining {
				continue
			}
			if shardOf[c.subject] == 0 && p.start < kill && c.start > kill {
				lost++
				lostCounts += int(c.remaining-p.remaining) + 1
				continue
			}
			rises++
			if rises <= 5 {
				t.Errorf("subject %d: remaining %d at %v, after %d at %v", c.subject, c.remaining, c.start, p.remaining, p.end)
			}
		}
	}

	var kindList []string
	for k, n := range kinds {
		kindList = append(kindList, fmt.Sprintf("%d × %s", n, k))
	}
	sort.Strings(kindList)
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
	rel := func(at, from time.Duration) string { // "never" when at is -1: no success after the last failure
		if at < 0 {
			return "never"
		}
		return sec(at - from)
	}
	otherResumed := "without failing"
	if lastOtherFail >= 0 {
		otherResumed = rel(otherResume, promo) + " after the promotion"
	}
	t.Logf("failover %s: kill→promotion %s, promotion→resume %s (dead shard; bound %v), outage %s; "+
		"other shards resumed %s; failed %d of %d decisions (dead shard %d, other shards %d, mere timeouts %d); "+
		"slowest call %v (timeout %v; %d calls over +%v excused: canaries overran by up to %v); "+
		"after the bound, failed %d of %d calls on the dead shard, %d of %d on the others; "+
		"%d subjects lost %d counts to the failover; errors: %s",
		name, sec(promo-kill), rel(deadResume, promo), within, rel(deadResume, kill),
		otherResumed, failed, total, deadFailed, otherFailed, slow,
		slowest.Round(time.Millisecond), failoverTimeout, excused, failoverSlack, maxStall.Round(time.Millisecond),
		bad[0], n[0], bad[1], n[1],
		lost, lostCounts, strings.Join(kindList, "; "))

	if deadFailed == 0 {
		t.Fatalf("no call failed on the dead shard (%d calls): was the master killed?", total)
	}
	if failedBeforeKill > 0 {
		t.Errorf("%d calls failed before the kill", failedBeforeKill)
	}
	for i, c := range unexcused {
		if i == 5 {
			t.Errorf("… %d calls in all", len(unexcused))
			break
		}
		t.Errorf("a call took %v (ok %v, error %q, started %v after the kill); the bound is its timeout %v + %v",
			(c.end - c.start).Round(time.Millisecond), c.ok, c.kind, (c.start - kill).Round(time.Millisecond), failoverTimeout, failoverSlack)
	}
	if rises > 0 {
		t.Errorf("%d times a subject's remaining count did not fall", rises)
	}
	if n[0] == 0 || rate(0) > rate(1)+0.05 {
		t.Errorf("after promotion + %v, %d of %d calls failed on the dead shard, %d of %d on the others", within, bad[0], n[0], bad[1], n[1])
	}
	if deadResume < 0 || deadResume > promo+within {
		t.Errorf("decisions for the dead shard resumed %s after the promotion, want ≤ %v (last failure started %s after it)",
			rel(deadResume, promo), within, sec(lastDeadFail1-promo))
	}
	if lastOtherFail >= 0 && (otherResume < 0 || otherResume > promo+within) {
		t.Errorf("decisions for the other shards resumed %s after the promotion, want ≤ %v", rel(otherResume, promo), within)
	}
}

func subjectName(i int) string { return fmt.Sprintf("failover-subject-%04d", i) }

// errKind names the kind of a failed call's error, for the log, and reports
// whether it is a mere timeout: the call's context ended with no sign of a
// dead node (no refused dial, no lost connection, no CLUSTERDOWN).
func errKind(err error) (kind string, slow bool) {
	msg := strings.TrimPrefix(err.Error(), "ratekit: redisstore: ")
	prefix := ""
	if rest, ok := strings.CutPrefix(msg, "context deadline exceeded"); ok {
		prefix, msg = "deadline", rest
		if msg == "" {
			return prefix, true
		}
		prefix += ", last "
	}
	for _, k := range []string{"CLUSTERDOWN", "connection refused", "connection reset", "broken pipe", "EOF", "i/o timeout", "context deadline exceeded"} {
		if strings.Contains(msg, k) {
			return prefix + k, prefix != "" && k == "i/o timeout"
		}
	}
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return prefix + msg, false
}
