// Command compare measures ratekit's Redis-backed limiters against a floor
// (one script call per decision) and other Go rate limiters, on a private
// redis-server it starts and stops.
//
//	go run ./cmd/compare -rounds 3 -duration 2s -scenarios A,B,C
//
// Scenarios: A, 64 goroutines over 10,000 keys, every call allowed; B, 64
// goroutines on one exhausted key, every call denied; C, HTTP through each
// contestant's middleware with 64 keep-alive clients and 10,000 identities;
// S (only when asked for), one goroutine calling sequentially over 10,000
// keys, every call allowed, with the latency of each call (p50, p99); L (only
// when asked for), one global limit of 1,000,000 per minute shared by
// 4 instances at full speed, with and without leases (store/lease).
// Each scenario runs every contestant once per round, interleaved, and prints
// the median of the rounds.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	workers = 64
	nkeys   = 10_000
	huge    = int64(1) << 40
)

// result is one run of one contestant in one scenario.
type result struct {
	decisions  float64
	elapsed    time.Duration
	redisUsec  float64
	byCmd      map[string]cmdStat // INFO commandstats per command (-commands)
	redisCalls float64
	scripts    float64
	redisProc  float64 // redis-server process CPU, µs
	goCPU      time.Duration
	mallocs    float64
	wrong      int64 // outcomes other than the scenario's expected one
	errs       int64
	p50, p99   time.Duration // per call (scenario S)
}

func (r result) perSec() float64 { return r.decisions / r.elapsed.Seconds() }

type scenario struct {
	name, desc string
	quota      int64
	http       bool
	hot        bool // one key instead of nkeys
	allowed    bool // the expected outcome
	sequential bool // one goroutine, and the latency of each call
}

var scenarios = map[string]scenario{
	"A": {name: "A", desc: "64 goroutines, 10,000 keys round-robin, every call allowed", quota: huge, allowed: true},
	"B": {name: "B", desc: "64 goroutines, one hot key, every call denied (quota 1 per hour, exhausted first)", quota: 1, hot: true},
	"C": {name: "C", desc: "HTTP middleware, 64 keep-alive clients, 10,000 X-Client identities, every request allowed", quota: huge, http: true, allowed: true},
	"S": {name: "S", desc: "one goroutine calling sequentially, 10,000 keys, every call allowed; latency per call", quota: huge, allowed: true, sequential: true},
}

func main() {
	rounds := flag.Int("rounds", 3, "rounds; each runs every contestant once per scenario")
	duration := flag.Duration("duration", 2*time.Second, "measured time of one run")
	which := flag.String("scenarios", "A,B,C", "comma-separated scenarios")
	only := flag.String("contestants", "", "comma-separated contestant names (default all)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (Go side only) to this file")
	flag.BoolVar(&showCommands, "commands", false, "after each table, each contestant's Redis commands (INFO commandstats): calls per decision, µs per call")
	flag.Parse()

	srv, err := startRedis()
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			srv.stop()
			os.Exit(1)
		}
		defer f.Close()
	}
	code := run(srv, *rounds, *duration, *which, *only)
	pprof.StopCPUProfile()
	srv.stop()
	os.Exit(code)
}

func run(srv *server, rounds int, duration time.Duration, which, only string) int {
	fmt.Printf("machine: %s, %d cores; %s; redis-server %s\n", cpuModel(), runtime.NumCPU(), runtime.Version(), srv.version)
	fmt.Printf("command: %s\n", strings.Join(append([]string{"go run ./cmd/compare"}, os.Args[1:]...), " "))
	fmt.Printf("date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	entries := registry[:0:0]
	for _, e := range registry {
		if only == "" || slices.Contains(strings.Split(only, ","), e.name) {
			entries = append(entries, e)
		}
	}
	for _, name := range strings.Split(which, ",") {
		if strings.TrimSpace(name) == "L" {
			if err := srv.admin.FlushAll(context.Background()).Err(); err != nil {
				fmt.Fprintln(os.Stderr, "compare:", err)
				return 1
			}
			if err := runLease(srv, rounds, duration, only); err != nil {
				fmt.Fprintln(os.Stderr, "compare: L:", err)
				return 1
			}
			continue
		}
		sc, ok := scenarios[strings.TrimSpace(name)]
		if !ok {
			fmt.Fprintf(os.Stderr, "compare: unknown scenario %q\n", name)
			return 2
		}
		if err := srv.admin.FlushAll(context.Background()).Err(); err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			return 1
		}
		results := map[string][]result{}
		var names []string
		for round := range rounds {
			for i, e := range entries {
				c, err := e.make(Params{Addr: srv.addr, Prefix: "c" + strconv.Itoa(i) + ":", Quota: sc.quota, Window: time.Hour})
				if err != nil {
					fmt.Fprintf(os.Stderr, "compare: %s: %v\n", e.name, err)
					return 1
				}
				c.Name = e.name
				if (sc.http && c.Middleware == nil) || (!sc.http && c.Allow == nil) {
					c.Close()
					continue
				}
				r, err := measure(srv, sc, c, duration)
				c.Close()
				if err != nil {
					fmt.Fprintf(os.Stderr, "compare: %s %s: %v\n", sc.name, e.name, err)
					return 1
				}
				if round == 0 {
					names = append(names, e.name)
				}
				results[e.name] = append(results[e.name], r)
				fmt.Fprintf(os.Stderr, "%s round %d %-24s %10.0f/s\n", sc.name, round+1, e.name, r.perSec())
			}
		}
		printTable(sc, names, results)
		if showCommands {
			printCommands(names, results)
		}
	}
	return 0
}

// scenarioKeys returns the keys a scenario calls: one hot key, or nkeys.
func scenarioKeys(hot bool) []string {
	if hot {
		return []string{"hot"}
	}
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = "user-" + strconv.Itoa(i)
	}
	return keys
}

// measure runs one contestant in one scenario for d and reads the counters
// around it.
func measure(srv *server, sc scenario, c *Contestant, d time.Duration) (result, error) {
	keys := scenarioKeys(sc.hot)
	var do func(ctx context.Context, i int) (bool, error)
	if sc.http {
		ts := httptest.NewServer(c.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		defer ts.Close()
		tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		reqs := make([]*http.Request, len(keys))
		for i, k := range keys {
			req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
			req.Header.Set(header, k)
			reqs[i] = req
		}
		do = func(ctx context.Context, i int) (bool, error) {
			resp, err := client.Do(reqs[i])
			if err != nil {
				return false, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				return true, nil
			case http.StatusTooManyRequests:
				return false, nil
			}
			return false, fmt.Errorf("status %d", resp.StatusCode)
		}
	} else {
		do = func(ctx context.Context, i int) (bool, error) { return c.Allow(ctx, keys[i]) }
	}

	// Warm up: exhaust the hot key, load scripts, open the pool's
	// connections. Not counted.
	nw := workers
	if sc.sequential {
		nw = 1
	}
	var wg sync.WaitGroup
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				_, _ = do(context.Background(), (w*4+j)%len(keys))
			}
		}()
	}
	wg.Wait()

	m, err := startMeter(srv)
	if err != nil {
		return result{}, err
	}

	var stop atomic.Bool
	var total, wrong, errs atomic.Int64
	var lat []time.Duration // scenario S: each call's latency
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			i := w * 7919
			var n, bad, failed int64
			for !stop.Load() {
				var t0 time.Time
				if sc.sequential {
					t0 = time.Now()
				}
				ok, err := do(ctx, i%len(keys))
				if sc.sequential {
					lat = append(lat, time.Since(t0))
				}
				switch {
				case err != nil:
					failed++
				case ok != sc.allowed:
					bad++
				}
				n++
				i++
			}
			total.Add(n)
			wrong.Add(bad)
			errs.Add(failed)
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()

	r, err := m.stop(total.Load(), wrong.Load(), errs.Load())
	if len(lat) > 0 {
		slices.Sort(lat)
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r, err
}

// A meter reads the counters of a run: Redis's command statistics and
// process CPU, this process's CPU and allocations, the time.
type meter struct {
	srv   *server
	proc0 float64
	ms0   runtime.MemStats
	ru0   syscall.Rusage
	start time.Time
}

// startMeter resets Redis's command statistics and reads the counters.
func startMeter(srv *server) (*meter, error) {
	runtime.GC()
	if err := srv.resetStats(); err != nil {
		return nil, err
	}
	m := &meter{srv: srv, proc0: srv.processCPU()}
	runtime.ReadMemStats(&m.ms0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &m.ru0)
	m.start = time.Now()
	return m, nil
}

// stop reads the counters again and returns the run's result.
func (m *meter) stop(decisions, wrong, errs int64) (result, error) {
	elapsed := time.Since(m.start)
	var ms1 runtime.MemStats
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	runtime.ReadMemStats(&ms1)
	proc1 := m.srv.processCPU()
	calls, scripts, usec, byCmd, err := m.srv.commandStats()
	if err != nil {
		return result{}, err
	}
	cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(m.ru0.Utime) +
		syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(m.ru0.Stime))
	return result{
		decisions:  float64(decisions),
		elapsed:    elapsed,
		redisUsec:  usec,
		byCmd:      byCmd,
		redisCalls: calls,
		scripts:    scripts,
		redisProc:  proc1 - m.proc0,
		goCPU:      cpu,
		mallocs:    float64(ms1.Mallocs - m.ms0.Mallocs),
		wrong:      wrong,
		errs:       errs,
	}, nil
}

// medianOf is the median of f over rs.
func medianOf[R any](rs []R, f func(R) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return median(xs)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// column is one column of a scenario's table: its header, its format and
// its value in one run (the table shows the median of the runs).
type column struct {
	head, format string
	value        func(r result) float64
}

func printTable(sc scenario, names []string, results map[string][]result) {
	perDec := func(f func(r result) float64) func(r result) float64 {
		return func(r result) float64 { return f(r) / r.decisions }
	}
	cols := []column{
		{"decisions/s", "%.0f", result.perSec},
		{"Redis cmd µs/dec", "%.2f", perDec(func(r result) float64 { return r.redisUsec })},
		{"Redis process CPU µs/dec", "%.2f", perDec(func(r result) float64 { return r.redisProc })},
		{"Redis cmds/dec", "%.2f", perDec(func(r result) float64 { return r.redisCalls })},
		{"scripts/dec", "%.2f", perDec(func(r result) float64 { return r.scripts })},
		{"Go CPU µs/dec", "%.2f", perDec(func(r result) float64 { return float64(r.goCPU.Microseconds()) })},
		{"allocs/dec", "%.1f", perDec(func(r result) float64 { return r.mallocs })},
	}
	if sc.sequential {
		micros := func(d func(r result) time.Duration) func(r result) float64 {
			return func(r result) float64 { return float64(d(r).Nanoseconds()) / 1e3 }
		}
		cols = []column{
			cols[0],
			{"p50 µs", "%.1f", micros(func(r result) time.Duration { return r.p50 })},
			{"p99 µs", "%.1f", micros(func(r result) time.Duration { return r.p99 })},
			cols[1], cols[6],
		}
	}
	fmt.Printf("\n### Scenario %s: %s\n\n", sc.name, sc.desc)
	fmt.Print("| contestant |")
	for _, c := range cols {
		fmt.Printf(" %s |", c.head)
	}
	fmt.Print(" unexpected/errors |\n|---|")
	for range cols {
		fmt.Print("---:|")
	}
	fmt.Println("---:|")
	for _, name := range names {
		rs := results[name]
		fmt.Printf("| %s |", name)
		for _, c := range cols {
			fmt.Printf(" "+c.format+" |", medianOf(rs, c.value))
		}
		var wrong, errs int64
		for _, r := range rs {
			wrong += r.wrong
			errs += r.errs
		}
		fmt.Printf(" %d/%d |\n", wrong, errs)
	}
}

func cpuModel() string {
	out, err := exec.Command("sh", "-c", "grep -m1 'model name' /proc/cpuinfo").Output()
	if err != nil {
		return "unknown CPU"
	}
	_, m, _ := strings.Cut(string(out), ":")
	return strings.TrimSpace(m)
}
