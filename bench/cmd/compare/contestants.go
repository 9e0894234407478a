package main

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/httprate"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ululeredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/denycache"
	"github.com/ratekit/ratekit/store/redisstore"
	"github.com/ratekit/ratekit/store/redisstore/rueidisstore"
)

// A Contestant is one limiter under test. Allow decides one call for key;
// Middleware wraps a handler, keying by the X-Client header and answering
// 429 on denial. Either may be nil when the contestant has no such form.
type Contestant struct {
	Name       string
	Allow      func(ctx context.Context, key string) (bool, error)
	Middleware func(http.Handler) http.Handler
	Close      func()

	limiter *ratekit.Limiter // ratekit's, for contestants that set overrides
}

// Params is what a constructor needs: the Redis address, a key prefix of its
// own, and the limit (quota calls per window).
type Params struct {
	Addr   string
	Prefix string
	Quota  int64
	Window time.Duration
}

// header is the request header the middlewares key by.
const header = "X-Client"

// registry lists the contestants in the order they run. A new variant is one
// line here and, if needed, one constructor below.
var registry = []struct {
	name string
	make func(p Params) (*Contestant, error)
}{
	{"ratekit-fixed", ratekitFixed(false)},
	{"ratekit-fixed-plain", ratekitPlain(fixedLimit)},
	{"ratekit-fixed-override", ratekitOverridden},
	{"ratekit-fixed+denycache", ratekitFixed(true)},
	{"ratekit-calendar", ratekitCalendar},
	{"ratekit-calendar-plain", ratekitPlain(calendarLimit)},
	{"ratekit-gcra", ratekitGCRA(false)},
	{"ratekit-gcra-plain", ratekitPlain(gcraLimit)},
	{"ratekit-gcra+denycache", ratekitGCRA(true)},
	{"ratekit-fixed-rueidis", ratekitRueidis(false, fixedLimit)},
	{"ratekit-fixed-rueidis+denycache", ratekitRueidis(true, fixedLimit)},
	{"ratekit-gcra-rueidis", ratekitRueidis(false, gcraLimit)},
	{"ratekit-fixed*8", ratekitFixed8},
	{"floor", floorGoRedis},
	{"floor-autopipeline", floorAutoPipeline},
	{"floor-rueidis", floorRueidis},
	{"ulule-limiter", ulule},
	{"redis_rate", redisRate},
	{"throttled", throttledGCRA},
	{"httprate-memory", httprateMemory},
}

func fixedLimit(p Params) ratekit.Limit { return ratekit.FixedWindow(p.Quota, p.Window) }

func gcraLimit(p Params) ratekit.Limit {
	// ratekit's GCRA admits at most one call per microsecond; for the huge
	// quotas a rate of 1e6/s with the quota as burst never denies.
	if float64(p.Quota)/p.Window.Seconds() > 1e6 {
		return ratekit.GCRA(1e6, time.Second, p.Quota)
	}
	return ratekit.GCRA(float64(p.Quota), p.Window, p.Quota)
}

func ratekitFixed(cache bool) func(Params) (*Contestant, error) {
	return func(p Params) (*Contestant, error) { return ratekitWith(p, cache, fixedLimit(p)) }
}

func ratekitGCRA(cache bool) func(Params) (*Contestant, error) {
	return func(p Params) (*Contestant, error) { return ratekitWith(p, cache, gcraLimit(p)) }
}

// ratekitOverridden is ratekit-fixed with an override in force for every
// key the scenarios use (the window doubled, so that it differs from the
// limit's own numbers and every call is still allowed, or denied, as
// ratekit-fixed's): what reading and applying an override costs.
func ratekitOverridden(p Params) (*Contestant, error) {
	c, err := ratekitFixed(false)(p)
	if err != nil {
		return nil, err
	}
	over := ratekit.FixedWindow(p.Quota, 2*p.Window).Named(fixedLimit(p).Name())
	ctx := context.Background()
	for _, key := range append(scenarioKeys(false), scenarioKeys(true)...) {
		if err := c.limiter.Override(ctx, key, over, time.Hour); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// ratekitFixed8 is ratekit-fixed with eight fixed windows per call (the
// quota over 1 to 8 windows), each with its own key: what several limits
// cost against one.
func ratekitFixed8(p Params) (*Contestant, error) {
	limits := make([]ratekit.Limit, 8)
	for i := range limits {
		limits[i] = ratekit.FixedWindow(p.Quota, time.Duration(i+1)*p.Window).Named("w" + strconv.Itoa(i+1))
	}
	return ratekitWith(p, false, limits...)
}

// ratekitPlain is ratekit's store over a go-redis client built from
// ClientOptions without AutoPipelineOptions: each call on a pooled
// connection of its own, as the store sends them for a plain client.
func ratekitPlain(limit func(Params) ratekit.Limit) func(Params) (*Contestant, error) {
	return func(p Params) (*Contestant, error) {
		opts := redisstore.ClientOptions(p.Addr)
		opts.AutoPipelineOptions = nil
		return ratekitOver(redis.NewClient(opts), p, false, limit(p))
	}
}

func ratekitWith(p Params, cache bool, limits ...ratekit.Limit) (*Contestant, error) {
	return ratekitOver(redis.NewClient(redisstore.ClientOptions(p.Addr)), p, cache, limits...)
}

func ratekitOver(client *redis.Client, p Params, cache bool, limits ...ratekit.Limit) (*Contestant, error) {
	rs, err := redisstore.New(client, redisstore.WithPrefix(p.Prefix))
	if err != nil {
		client.Close()
		return nil, err
	}
	return ratekitOn(rs, cache, limits, func() { client.Close() })
}

// ratekitRueidis is ratekit's Redis store over rueidis.
func ratekitRueidis(cache bool, limit func(Params) ratekit.Limit) func(Params) (*Contestant, error) {
	return func(p Params) (*Contestant, error) {
		client, err := rueidis.NewClient(rueidisstore.ClientOption(p.Addr))
		if err != nil {
			return nil, err
		}
		rs, err := rueidisstore.New(client, rueidisstore.WithPrefix(p.Prefix))
		if err != nil {
			client.Close()
			return nil, err
		}
		return ratekitOn(rs, cache, []ratekit.Limit{limit(p)}, client.Close)
	}
}

// ratekitOn builds the ratekit contestant over a store, with or without a
// deny cache in front of it.
func ratekitOn(rs ratekit.Store, cache bool, limits []ratekit.Limit, closeClient func()) (*Contestant, error) {
	st := rs
	if cache {
		st = denycache.New(rs)
	}
	l, err := ratekit.New(st, limits...)
	if err != nil {
		closeClient()
		return nil, err
	}
	return &Contestant{
		Allow: func(ctx context.Context, key string) (bool, error) {
			d, err := l.Allow(ctx, key)
			return d.Allowed, err
		},
		Middleware: ratekit.Middleware(l, ratekit.ByHeader(header)),
		Close:      closeClient,
		limiter:    l,
	}, nil
}

// floorScript is the least a Redis counter can do per decision: one script
// call that increments and, on the first call of a window, sets the expiry.
const floorScript = `local n = redis.call('INCRBY', KEYS[1], ARGV[1]) if n == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return n`

// floorAutoPipeline is the floor through go-redis's autopipeliner (its
// blocking face, the one a user calls like a client).
func floorAutoPipeline(p Params) (*Contestant, error) {
	client := redis.NewClient(&redis.Options{Addr: p.Addr, PoolSize: 128, DisableIdentity: true})
	ap, err := client.AutoPipeline()
	if err != nil {
		client.Close()
		return nil, err
	}
	script := redis.NewScript(floorScript)
	ms := strconv.FormatInt(p.Window.Milliseconds(), 10)
	allow := func(ctx context.Context, key string) (bool, error) {
		n, err := script.EvalSha(ctx, ap, []string{p.Prefix + key}, 1, ms).Int64()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			n, err = script.Eval(ctx, ap, []string{p.Prefix + key}, 1, ms).Int64()
		}
		return n <= p.Quota, err
	}
	return &Contestant{Allow: allow, Middleware: plainMiddleware(allow), Close: func() { client.Close() }}, nil
}

func floorGoRedis(p Params) (*Contestant, error) {
	client := redis.NewClient(&redis.Options{Addr: p.Addr, PoolSize: 128, DisableIdentity: true})
	script := redis.NewScript(floorScript)
	ms := strconv.FormatInt(p.Window.Milliseconds(), 10)
	allow := func(ctx context.Context, key string) (bool, error) {
		n, err := script.Run(ctx, client, []string{p.Prefix + key}, 1, ms).Int64()
		return n <= p.Quota, err
	}
	return &Contestant{Allow: allow, Middleware: plainMiddleware(allow), Close: func() { client.Close() }}, nil
}

func floorRueidis(p Params) (*Contestant, error) {
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{p.Addr}, DisableCache: true})
	if err != nil {
		return nil, err
	}
	script := rueidis.NewLuaScript(floorScript)
	ms := strconv.FormatInt(p.Window.Milliseconds(), 10)
	allow := func(ctx context.Context, key string) (bool, error) {
		n, err := script.Exec(ctx, client, []string{p.Prefix + key}, []string{"1", ms}).AsInt64()
		return n <= p.Quota, err
	}
	return &Contestant{Allow: allow, Middleware: plainMiddleware(allow), Close: client.Close}, nil
}

func ulule(p Params) (*Contestant, error) {
	client := redis.NewClient(&redis.Options{Addr: p.Addr, PoolSize: 128, DisableIdentity: true})
	st, err := ululeredis.NewStoreWithOptions(client, limiter.StoreOptions{Prefix: p.Prefix})
	if err != nil {
		client.Close()
		return nil, err
	}
	l := limiter.New(st, limiter.Rate{Period: p.Window, Limit: p.Quota})
	mw := stdlib.NewMiddleware(l, stdlib.WithKeyGetter(func(r *http.Request) string { return r.Header.Get(header) }))
	return &Contestant{
		Allow: func(ctx context.Context, key string) (bool, error) {
			c, err := l.Get(ctx, key)
			return !c.Reached, err
		},
		Middleware: mw.Handler,
		Close:      func() { client.Close() },
	}, nil
}

func redisRate(p Params) (*Contestant, error) {
	client := redis.NewClient(&redis.Options{Addr: p.Addr, PoolSize: 128, DisableIdentity: true})
	l := redis_rate.NewLimiter(client)
	limit := redis_rate.Limit{Rate: int(p.Quota), Burst: int(p.Quota), Period: p.Window}
	allow := func(ctx context.Context, key string) (bool, error) {
		res, err := l.Allow(ctx, p.Prefix+key, limit)
		if err != nil {
			return false, err
		}
		return res.Allowed > 0, nil
	}
	return &Contestant{Allow: allow, Middleware: plainMiddleware(allow), Close: func() { client.Close() }}, nil
}

func throttledGCRA(p Params) (*Contestant, error) {
	client := redis.NewClient(&redis.Options{Addr: p.Addr, PoolSize: 128, DisableIdentity: true})
	st, err := goredisstore.NewCtx(client, p.Prefix)
	if err != nil {
		client.Close()
		return nil, err
	}
	l, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
		MaxRate:  throttled.PerDuration(int(p.Quota), p.Window),
		MaxBurst: int(p.Quota) - 1,
	})
	if err != nil {
		client.Close()
		return nil, err
	}
	h := &throttled.HTTPRateLimiterCtx{RateLimiter: l, VaryBy: &throttled.VaryBy{Headers: []string{header}}}
	return &Contestant{
		Allow: func(ctx context.Context, key string) (bool, error) {
			limited, _, err := l.RateLimitCtx(ctx, key, 1)
			return !limited, err
		},
		Middleware: h.RateLimit,
		Close:      func() { client.Close() },
	}, nil
}

// httprateMemory is HTTP only and in-process (no Redis): a reference for
// scenario C, where its Redis columns read zero.
func httprateMemory(p Params) (*Contestant, error) {
	mw := httprate.LimitBy(int(p.Quota), p.Window, func(r *http.Request) (string, error) {
		return r.Header.Get(header), nil
	})
	return &Contestant{Middleware: mw, Close: func() {}}, nil
}

// plainMiddleware is a minimal net/http middleware around an Allow func for
// the contestants that ship none: key by header, 429 on denial, 500 on error.
func plainMiddleware(allow func(ctx context.Context, key string) (bool, error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ok, err := allow(r.Context(), r.Header.Get(header))
			switch {
			case err != nil:
				http.Error(w, "rate limiter unavailable", http.StatusInternalServerError)
			case !ok:
				http.Error(w, "too many requests", http.StatusTooManyRequests)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}
