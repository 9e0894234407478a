package main

import (
	"context"
	"fmt"
	"github.com/ratekit/ratekit/store/storetest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/lease"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

// Scenario L: one global limit of 1,000,000 per minute, shared by 4
// instances (each its own client, store and Limiter) at full speed, with
// and without leases.
const (
	leaseQuota     = 1_000_000
	leaseInstances = 4
	leaseWorkers   = workers / leaseInstances // goroutines per instance
)

var leaseScenario = scenario{name: "L", desc: "one global fixed window of 1,000,000 per minute, 4 instances (own client, store and Limiter each), " +
	"16 goroutines each at full speed, until the quota is spent or the duration ends"}

// leaseVariants are scenario L's contestants.
var leaseVariants = []struct {
	name           string
	leased, rueids bool
}{
	{"ratekit-fixed", false, false},
	{"ratekit-fixed+lease", true, false},
	{"ratekit-fixed-rueidis", false, true},
	{"ratekit-fixed-rueidis+lease", true, true},
}

// leaseResult is one run of scenario L.
type leaseResult struct {
	result
	admitted, refused int64
	debited, held     int64 // by Redis's count, and in the instances' leases at the end
	leases            int64
}

// instance is one instance of the service in scenario L.
type instance struct {
	limiter *ratekit.Limiter
	leases  *lease.Store // nil without leases
	store   ratekit.Store
	close   func()
}

func newInstance(addr, prefix string, limit ratekit.Limit, leased, useRueidis bool) (*instance, error) {
	var rs ratekit.Store
	var closeClient func()
	if useRueidis {
		client, err := rueidis.NewClient(rueidisstore.ClientOption(addr))
		if err != nil {
			return nil, err
		}
		s, err := rueidisstore.New(client, rueidisstore.WithPrefix(prefix))
		if err != nil {
			client.Close()
			return nil, err
		}
		rs, closeClient = s, client.Close
	} else {
		client := redis.NewClient(redisstore.ClientOptions(addr))
		s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
		if err != nil {
			client.Close()
			return nil, err
		}
		rs, closeClient = s, func() { client.Close() }
	}
	in := &instance{store: rs, close: closeClient}
	st := rs
	if leased {
		ls, err := lease.New(rs, []ratekit.Limit{limit})
		if err != nil {
			closeClient()
			return nil, err
		}
		in.leases, st = ls, ls
	}
	l, err := ratekit.New(st, limit)
	if err != nil {
		closeClient()
		return nil, err
	}
	in.limiter = l
	return in, nil
}

// runLease runs scenario L: every variant once per round, then the table.
// It returns an error when any run admitted more than the quota.
func runLease(srv *server, rounds int, d time.Duration, only string) error {
	results := map[string][]leaseResult{}
	var names []string
	for round := range rounds {
		for i, v := range leaseVariants {
			if only != "" && !slices.Contains(strings.Split(only, ","), v.name) {
				continue
			}
			r, err := measureLease(srv, "l"+strconv.Itoa(round)+"-"+strconv.Itoa(i)+":", v.leased, v.rueids, d)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			if round == 0 {
				names = append(names, v.name)
			}
			results[v.name] = append(results[v.name], r)
			fmt.Fprintf(os.Stderr, "L round %d %-28s %10.0f/s admitted %d of %d debited\n", round+1, v.name, r.perSec(), r.admitted, r.debited)
			if r.admitted > leaseQuota || r.debited > leaseQuota || r.debited != r.admitted+r.held {
				return fmt.Errorf("%s: admitted %d, debited %d, held %d: over the quota or units unaccounted for", v.name, r.admitted, r.debited, r.held)
			}
		}
	}
	printLease(names, results)
	return nil
}

// measureLease runs one variant of scenario L under prefix.
func measureLease(srv *server, prefix string, leased, useRueidis bool, d time.Duration) (leaseResult, error) {
	limit := ratekit.FixedWindow(leaseQuota, time.Minute).Named("global")
	var ins []*instance
	defer func() {
		for _, in := range ins {
			in.close()
		}
	}()
	for range leaseInstances {
		in, err := newInstance(srv.addr, prefix, limit, leased, useRueidis)
		if err != nil {
			return leaseResult{}, err
		}
		ins = append(ins, in)
	}
	// Warm up on another subject, through the Redis store alone (leases
	// would hold units of it): loads the engine, opens connections.
	var wg sync.WaitGroup
	for _, in := range ins {
		for range leaseWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 4 {
					_, _ = storetest.Take(context.Background(), in.store, "warm-up", []ratekit.Limit{limit}, 1)
				}
			}()
		}
	}
	wg.Wait()

	m, err := startMeter(srv)
	if err != nil {
		return leaseResult{}, err
	}
	var stop atomic.Bool
	var admitted, refused, errs atomic.Int64
	for _, in := range ins {
		for range leaseWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				var a, r, e int64
				for !stop.Load() {
					dec, err := in.limiter.Allow(ctx, "global")
					if err != nil {
						e++
						continue
					}
					if !dec.Allowed {
						r++
						break // the quota is spent
					}
					a++
				}
				admitted.Add(a)
				refused.Add(r)
				errs.Add(e)
			}()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		stop.Store(true)
		<-done
	}
	res, err := m.stop(admitted.Load()+refused.Load(), 0, errs.Load())
	if err != nil {
		return leaseResult{}, err
	}
	peek, err := storetest.Peek(context.Background(), ins[0].store, "global", []ratekit.Limit{limit})
	if err != nil {
		return leaseResult{}, err
	}
	r := leaseResult{result: res, admitted: admitted.Load(), refused: refused.Load(), debited: leaseQuota - peek.Remaining}
	for _, in := range ins {
		if in.leases != nil {
			st := in.leases.Stats()
			r.held += st.Held
			r.leases += st.Leases
		}
	}
	return r, nil
}

func printLease(names []string, results map[string][]leaseResult) {
	fmt.Printf("\n### Scenario L: %s\n\n", leaseScenario.desc)
	fmt.Println("| contestant | decisions/s | scripts/dec | Redis cmds/dec | Redis process CPU µs/dec | Go CPU µs/dec | allocs/dec | seconds | admitted (every round) | debited by Redis | held at the end | leases | errors |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|")
	for _, name := range names {
		rs := results[name]
		col := func(f func(r leaseResult) float64) float64 { return medianOf(rs, f) }
		var admitted, debited, held []string
		var errs int64
		for _, r := range rs {
			admitted = append(admitted, strconv.FormatInt(r.admitted, 10))
			debited = append(debited, strconv.FormatInt(r.debited, 10))
			held = append(held, strconv.FormatInt(r.held, 10))
			errs += r.errs
		}
		fmt.Printf("| %s | %.0f | %.5f | %.4f | %.3f | %.3f | %.2f | %.2f | %s | %s | %s | %.0f | %d |\n", name,
			col(func(r leaseResult) float64 { return r.perSec() }),
			col(func(r leaseResult) float64 { return r.scripts / r.decisions }),
			col(func(r leaseResult) float64 { return r.redisCalls / r.decisions }),
			col(func(r leaseResult) float64 { return r.redisProc / r.decisions }),
			col(func(r leaseResult) float64 { return float64(r.goCPU.Microseconds()) / r.decisions }),
			col(func(r leaseResult) float64 { return r.mallocs / r.decisions }),
			col(func(r leaseResult) float64 { return r.elapsed.Seconds() }),
			strings.Join(admitted, ", "), strings.Join(debited, ", "), strings.Join(held, ", "),
			col(func(r leaseResult) float64 { return float64(r.leases) }),
			errs)
	}
}
