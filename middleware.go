package ratekit

import "net/http"

// Middleware returns net/http middleware that counts each request against l
// under the subject named by key:
//
//   - allowed: the rate-limit headers are set and the request goes on;
//   - denied: 429 Too Many Requests with Retry-After, Cache-Control: no-store,
//     the rate-limit headers and a JSON body (see DeniedResponse);
//   - no decision (the store failed or timed out, the key function failed or
//     gave an empty key, the cost is invalid): the error policies decide,
//     fail open on store errors and 400 on key errors by default; a store
//     error is never a 429.
//
// Each store call is bounded by WithTimeout. Middleware panics if l or key
// is nil, or for options NewGuard refuses.
func Middleware(l *Limiter, key KeyFunc, opts ...Option) func(http.Handler) http.Handler {
	if l == nil || key == nil {
		panic("ratekit: Middleware needs a Limiter and a KeyFunc")
	}
	g := NewGuard(l, opts...)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if g.Skip(r) {
				next.ServeHTTP(w, r)
				return
			}
			k, kerr := key(r)
			v := g.Check(r.Context(), k, kerr, g.Cost(r), w.Header())
			if v.Err != nil {
				g.Report(r, v.Err)
			}
			if v.Pass {
				g.Serve(w, r, next, v.Reservation)
				return
			}
			g.Refuse(w, r, v)
		})
	}
}
