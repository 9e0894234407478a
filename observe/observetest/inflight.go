package observetest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/observe"
	"github.com/ratekit/ratekit/store/memstore"
)

// inFlight: the in-flight series read the slots held, exactly, while
// requests wait in their handler, and 0 once they have returned; the
// Released events that report the slots given back count in no decision
// series (no "released" outcome, no series for the policy "conc,all" they
// carry).
func inFlight(t *testing.T, setup Setup) {
	obs, check := setup(t)
	held, release := HoldInFlight(t, obs)
	check(held)
	check(release())
}

// HoldInFlight holds two requests inside the handler of a
// ratekit.Middleware reporting to obs, whose Limiter has the InFlight
// limits "conc" (2 slots) and "all" (5), and the shadow limit "new" (1 per
// minute). The first request is allowed (binding: conc, 1 slot left); the
// second is shadow_denied by new and passes, holding its slots too; a
// third, sent while both wait, is denied by conc and holds none. It
// returns what the metrics must hold then (2 slots in use of conc and of
// all), and release, which lets the two requests return and returns what
// the metrics must hold once their slots are back.
func HoldInFlight(t *testing.T, obs observe.Observer) (held Want, release func() Want) {
	t.Helper()
	l := limiter(t, memstore.New(), ratekit.InFlight(2).Named("conc"), ratekit.InFlight(5).Named("all"),
		ratekit.FixedWindow(1, time.Minute).Named("new").Shadow())
	var entered atomic.Int64
	in, out := make(chan struct{}), make(chan struct{})
	letGo := sync.OnceFunc(func() { close(out) })
	t.Cleanup(letGo) // a failed test leaves no handler waiting
	h := ratekit.Middleware(l, ratekit.ByIP(), ratekit.WithObserver(obs))(http.HandlerFunc(
		func(http.ResponseWriter, *http.Request) {
			if entered.Add(1) > 2 { // a request admitted past the slots: do not hang
				return
			}
			in <- struct{}{}
			<-out
		}))
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			mu.Lock()
			codes[rec.Code]++
			mu.Unlock()
		}()
		<-in // one at a time: the first is allowed, the second shadow_denied
	}
	statuses(t, send(h, 1), map[int]int{429: 1})
	decisions := map[string]Counts{
		"conc": {Allowed: 1, Denied: 1, Latency: 2},
		"new":  {ShadowDenied: 1, Latency: 1},
	}
	held = Want{Policies: decisions, InFlight: map[string]int{"conc": 2, "all": 2}}
	return held, func() Want {
		t.Helper()
		letGo()
		wg.Wait()
		statuses(t, codes, map[int]int{200: 2})
		return Want{Policies: decisions, InFlight: map[string]int{"conc": 0, "all": 0}}
	}
}
