// Package redisengine is ratekit's Redis engine, written once for every Redis
// client: the Lua programs, the key schema, the arguments of each call
// (prepared once per set of limits), the checks of every reply, and the
// handling of replies that prove a call did not run. It uses the standard
// library only and talks to Redis through Conn, which a client module
// implements: store/redisstore for go-redis, store/redisstore/rueidisstore
// for rueidis. Users pick one of those; this package is for store authors.
//
// # Keys
//
// A subject's state lives under <prefix>:{<tag>}:<name>:<algorithm>:<fingerprint>,
// a block under the same key and ":block" (see Tag and Engine.Keys). All keys
// of a subject share the tag, so a call never crosses Redis Cluster slots.
//
// # Lua: a prelude, one file per algorithm, the programs
//
// lua/prelude.lua holds what every program shares: the clock (Redis's TIME in
// µs, read once per call), integer formatting, the parsing caches, pruning.
// Each built-in algorithm has a file of its own (lua/fixed.lua,
// lua/sliding.lua, lua/log.lua, lua/gcra.lua for gcra, token and leaky,
// lua/inflight.lua, lua/suppressed.lua) with its decide, its writes and its
// settle arithmetic, and adds itself to the table algorithms by name. The
// programs call algorithms through that table only: decide (lua/engine.lua,
// whose header is the contract of an algorithm), settle (lua/settle.lua) and
// reputation (lua/reputation.lua). The engine puts the files together in one
// fixed order, custom algorithms after the built-in ones, so that one set of
// algorithms is one source and one SHA.
//
// # Programs: Functions where Redis has them, scripts elsewhere
//
// The engine's programs form one Redis Functions library, named after a hash
// of its code (ratekit_<hash>). The first call sends FCALL; where the
// function is missing ("Function not found": a new or restarted node,
// FUNCTION FLUSH) the engine loads the library with FUNCTION LOAD REPLACE on
// every primary (Conn.LoadLibrary) and calls again, once: the reply proves
// the first call did not run, so nothing is charged twice. If the library is
// gone again by then (flushed twice in a row), that call runs as a script,
// which carries its own source: no call fails for it. A library is
// loaded once per node and kept by its replicas and across restarts with
// persistence; each FCALL then runs only the algorithms, without compiling
// or re-creating the engine's functions and tables. Where FCALL is an
// unknown command (Redis before 7.0) or FUNCTION is refused (NOPERM), the
// engine runs the same code as scripts from then on: EVALSHA, and EVAL on
// NOSCRIPT. A full Redis (noeviction) refuses FCALL before it runs; the
// engine then sends the script, which decides a denial without a write.
//
// # The decide program
//
// KEYS: one state key per limit, then one block key per limit with a block.
// ARGV[1] is the cost, ARGV[2] the mode ("take", "peek" or "reset"), then
// one argument per limit: "<algorithm> <p1> <p2> <p3> <block ms>", prepared
// once per set of limits in Go and parsed once per distinct string in Redis;
// a call with a Suppressed limit adds its uniform draw. The reply is seven
// integers per limit (allowed, remaining, reset µs, retry-after µs, flags,
// delay µs, effective window µs), then, when a limit reports a suppression factor, one string per
// limit. lua/engine.lua documents the contract in full.
//
// An algorithm answers in a table with named fields (allowed, remaining,
// reset, retry, flags, the write to commit and the state after it), the one
// the engine lends it, which lives as long as the library: a call of the
// common paths makes no table but its reply. A custom algorithm
// (Options.Algorithms) is a Lua function of (r, key, p1, p2, p3) that
// fills r in and returns it, or returns a table of its own.
//
// A reserve call (Engine.Reserve, and a Take with an InFlight limit) sends
// the mode "reserve", its lease and its caller's deadline on Redis's clock
// (µs, 0 for none) before the limits, and its reply ends with Redis's time.
// Redis runs a call that comes past that deadline without a write and
// replies with the error "LATE ...", which the engine returns as a
// context.DeadlineExceeded: a call written to a Redis that stalled, and
// given up by its caller, takes no slot and charges nothing when Redis
// resumes. The engine learns how far Redis's clock is from its own from the
// times of the replies (the least of Redis's time minus the time of sending,
// over the last one to two seconds) and sends the deadline 2 ms late; a
// call refused while its caller still waits proves the estimate stale (a
// clock step), and is sent again, once, without a deadline.
//
// # Conn
//
// A Conn sends one Command (FCALL, EVALSHA or EVAL) to the node of its keys,
// never twice, and returns the reply as int64, string, []any or nil; error
// replies come back as *ReplyError, failures that prove the command was not
// written are wrapped with NotSent. The engine retries what provably did not
// run (NotSent, a failed dial, LOADING, TRYAGAIN, CLUSTERDOWN, MASTERDOWN,
// BUSY) up to three attempts within the context, and returns anything else as
// a *RunError.
package redisengine
