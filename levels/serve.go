package levels

import (
	"context"
	"net/http"
)

func (lv *levels) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if lv.any.Skip(r) {
		next.ServeHTTP(w, r)
		return
	}
	// one deadline for the global, reputation and tenant store calls, so a
	// hung store costs a request one timeout; next gets r as it came
	ctx := lv.any.Budget(r.Context())
	tenant, kerr := lv.key(r)
	cost := lv.any.Cost(r)
	_, pattern := lv.routes.Handler(r)
	g := lv.endpoints[pattern]
	if kerr != nil && g != nil { // the key error policy, before anything is charged
		v := g.Check(ctx, tenant, kerr, cost, w.Header())
		g.Report(r, v.Err)
		if !v.Pass {
			g.Refuse(w, r, v)
			return
		}
		g = nil // fail open: the request passes uncounted by its tenant limits
	}
	rest := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lv.serveTenant(ctx, next, w, r, g, tenant, kerr, cost)
	})
	if lv.global != nil {
		var scratch headerBuf // the global headers reach only a global denial
		v := lv.global.Check(ctx, GlobalSubject, nil, cost, &scratch)
		if v.Err != nil {
			lv.global.Report(r, v.Err)
		}
		if !v.Pass && (v.Err != nil || !lv.gate(ctx, r, tenant, kerr)) {
			scratch.writeTo(w.Header())
			lv.global.Refuse(w, r, v)
			return
		}
		lv.global.Serve(w, r, rest, v.Reservation) // a global reservation ends with the request
		return
	}
	rest(w, r)
}

// serveTenant decides a request by its tenant's guard g (nil: none on its
// route) once the global limit let it through, and serves it.
func (lv *levels) serveTenant(ctx context.Context, next http.Handler, w http.ResponseWriter, r *http.Request, g guard, tenant string, kerr error, cost int64) {
	if g == nil { // no tenant limits on this route
		lv.record(ctx, r, tenant, kerr == nil, false)
		next.ServeHTTP(w, r)
		return
	}
	v := g.Check(ctx, tenant, nil, cost, w.Header())
	if v.Err != nil {
		g.Report(r, v.Err)
	}
	lv.record(ctx, r, tenant, v.Err == nil, !v.Pass)
	if v.Pass {
		g.Serve(w, r, next, v.Reservation)
		return
	}
	g.Refuse(w, r, v)
}

// gate decides a request while the global limit is exceeded: it passes when
// the tenant's reputation reaches the threshold. A failed read follows the
// store error policy.
func (lv *levels) gate(ctx context.Context, r *http.Request, tenant string, kerr error) bool {
	if lv.rep == nil || kerr != nil || tenant == "" {
		return false
	}
	ctx, cancel := lv.any.Bound(ctx)
	defer cancel()
	rep, err := lv.rep.Reputation(ctx, tenant, lv.policy)
	if err != nil {
		return lv.any.Report(r, err)
	}
	return rep.Score >= lv.threshold
}

// record counts a violation or a good request for the tenant, when
// reputations are kept and the request had a decision for its tenant.
func (lv *levels) record(ctx context.Context, r *http.Request, tenant string, decided, violation bool) {
	if lv.rep == nil || !decided || tenant == "" {
		return
	}
	update := lv.rep.RecordGood
	if violation {
		update = lv.rep.RecordViolation
	}
	ctx, cancel := lv.any.Bound(ctx)
	defer cancel()
	if _, err := update(ctx, tenant, lv.policy); err != nil {
		lv.any.Report(r, err)
	}
}

// headerBuf holds the headers a guard's Check sets (at most 7), for a
// response that may not carry them. An http.Header instead adds 7
// allocations and about 25% to BenchmarkLevels.
type headerBuf struct {
	kv [8][2]string
	n  int
}

// Set records a header; writeTo applies them in order.
func (b *headerBuf) Set(k, v string) {
	if b.n < len(b.kv) {
		b.kv[b.n] = [2]string{k, v}
		b.n++
	}
}

func (b *headerBuf) writeTo(h http.Header) {
	for _, kv := range b.kv[:b.n] {
		h.Set(kv[0], kv[1])
	}
}
