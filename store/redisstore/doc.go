// Package redisstore is the Redis ratekit.Store over go-redis. Every decision
// is one atomic call of the engine in store/redisengine (its Lua library,
// lua/engine.lua) run on Redis's own clock, so all instances of a service
// that share a Redis share one limit. It works with *redis.Client,
// *redis.ClusterClient, *redis.Ring and redis.UniversalClient. The store is
// the engine's go-redis Conn; the algorithms, keys and reply checks live in
// the engine, shared with the rueidis store.
//
// On Redis 7 and later the engine runs as a Redis Functions library, loaded
// once per node (FUNCTION LOAD, on every master of a cluster) and called with
// FCALL; on Redis 6.2 as scripts (EVALSHA, EVAL on NOSCRIPT). A missing
// function (a restarted node, FUNCTION FLUSH) is loaded and the call sent
// again, once: the reply proves the call did not run.
//
// # Keys
//
// A subject's state lives under
//
//	<prefix>:{<tag>}:<name>:<algorithm>:<fingerprint>
//
// The tag is the subject itself when it is 1 to 64 printable ASCII characters
// without braces, '#' or spaces, and otherwise '#' followed by 22 characters
// of the base64url SHA-256 of the subject. All keys of one subject share the
// tag, so a call never crosses Redis Cluster slots; every key stays under 200
// bytes whatever the subject; the fingerprint hashes the limit's parameters,
// so new parameters start fresh state. Every key has a TTL no longer than its
// limit's horizon.
//
// # Script contract
//
// store/redisengine's lua/engine.lua documents it in full. KEYS holds one state key per limit,
// then the block keys. ARGV[1] is the cost, ARGV[2] the mode ("take", "peek"
// or "reset"), then one argument per limit, "<algorithm> <p1> <p2> <p3>
// <block ms>"; when a call has a Suppressed limit, a last
// argument carries the call's uniform draw (an integer k for k / 2^53, drawn
// in Go: see WithRandom). The reply is seven integers per limit: allowed (1
// or 0), remaining, reset in µs, retry-after in µs, flags (1: the cost can
// never pass, 2: blocked, 4: declined by a draw), delay in µs and the
// effective window in µs (0 where remaining and reset imply it); when a limit
// reports a suppression factor, one string per limit follows ('%.17g'). Every
// reply element is type-checked; a surprise is an error.
//
// Reputations (see reputation.Store) are kept by a second program of the
// library, lua/reputation.lua, under <prefix>:{<tag>}:<name>:reputation:<fingerprint>:
// one call per update, its score returned as a '%.17g' string.
//
// # Client settings
//
// Create the client with ContextTimeoutEnabled: true. go-redis then bounds
// each call's socket I/O by the call's context, so a hung Redis costs no more
// than the middleware's timeout (100 ms by default); without it, a call waits
// for the client's ReadTimeout (5 s by default). New rejects a *redis.Client,
// *redis.ClusterClient or *redis.Ring, also one behind a
// redis.UniversalClient, whose options leave it false; it cannot inspect a
// client of another type, and accepts it as it is.
//
// New sends nothing to Redis, so a wrong address shows only when calls fail,
// and the middleware's default error policy lets failed calls through. Call
// Store.Ping when the service starts: it sends PING (to every master of a
// cluster, to every shard of a ring) and names the address and the cause of a
// failure, e.g. "ratekit: redisstore: cannot reach Redis at 10.0.0.5:6379:
// dial tcp 10.0.0.5:6379: connect: connection refused". Refuse to start, or
// log it, as you prefer. ClientOptions returns client options that keep the
// store deciding when Redis slows down (docs/operations.md, "Redis settings",
// has a cluster's).
//
// A call that fails because its context ended reports the context's error and
// the last failure behind it, e.g. "ratekit: redisstore: context deadline
// exceeded (last error: dial tcp 10.0.0.5:6379: connect: connection
// refused)". go-redis dials in the background and tries a refused dial again
// (DialerRetries, 5 attempts 100 ms apart by default) before it reports it, so
// New adds a hook to the client that only watches dials and keeps the last
// failure; of a cluster client it watches the nodes created after New.
//
// # Retries
//
// go-redis retries a command whose connection failed after it was written
// (EOF, read timeout), which would run the call twice and charge twice. The
// store sends its calls as commands that report NoRetry, so go-redis never
// sends one a second time; a lost reply is an error, handled by the caller's
// error policy, and the subject is charged at most once. "Function not found"
// (a node without the library) is answered by loading it and calling again
// (as a script if it was flushed again meanwhile), and NOSCRIPT (an empty
// script cache, where scripts are used) by sending the script with EVAL, as
// redis.Script.Run does: both replies mean the call did not run. A failure
// that proves the call did not run (a failed dial, a pool timeout, LOADING,
// TRYAGAIN, CLUSTERDOWN, MASTERDOWN, BUSY) is tried again, at most three
// attempts in all, 10 and then 20 ms
// apart, and never past the context's deadline.
//
// On a *redis.ClusterClient, a failure that hints at a changed cluster (a
// refused, lost or timed-out connection; CLUSTERDOWN, MASTERDOWN, TRYAGAIN,
// LOADING, READONLY, MOVED, ASK) also asks the client to reload its slot map
// in the background, at most once per 250 ms per client, for the calls that
// follow. go-redis itself reloads only after MOVED, ASK or READONLY and every
// ClusterStateReloadInterval (60 s), so without this a dead master's slots
// would be sent to its address for up to a minute after its replica took
// over; with it, decisions resume within a fraction of a second of the
// promotion.
//
// # Eviction and memory
//
// Every key has a TTL, so any maxmemory-policy but noeviction may evict the
// keys that hold blocks and counters: volatile-* as readily as allkeys-*.
// Ping warns of such a server. A blocked call TOUCHes its block and counters
// (PTTL alone would leave them idle to LRU and LFU), so subjects that keep
// asking keep their keys; a quiet one may lose them. Under noeviction a full
// Redis refuses writes: a denial never depends on a write (a block that
// cannot be written leaves the denial to the counters), while an admitted
// call, which must write, fails and follows the error policy.
package redisstore
