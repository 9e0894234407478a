// Package redistest provides Redis servers for ratekit's tests.
//
// Standalone returns a server shared by a test binary: the one at REDIS_ADDR
// when set, else a private redis-server started on a random loopback port in
// a temporary directory (stopped by PID when the binary ends). Without
// redis-server the test skips with a printed notice; with
// RATEKIT_REQUIRE_REDIS=1 (set in CI) it fails instead. Cluster does the same
// for a real 3-master Redis Cluster (REDIS_CLUSTER_ADDRS, or redis-server and
// redis-cli on PATH). miniredis, whose keys never expire in real time, is
// used only by fake-clock tests, which start their own and drive it with
// NewClock, or NewRedisClock, which expires keys at the millisecond a real
// Redis does.
//
// The clients that Server and Cluster make (NewClient, Masters) set
// ContextTimeoutEnabled, which redisstore.New requires; NewClientAsGiven
// leaves the options as the test gives them.
//
// Private starts a server of one test's own (with Freeze and Thaw, SIGSTOP
// and SIGCONT, and Kill and Restart, SIGKILL and a new process on the same
// port); StartReplicated a private 6-node cluster (3 masters, a
// replica each) with Kill, Freeze and WaitPromoted; NewProxy, NewDelayProxy,
// ClosedAddr and Blackhole play a lost reply, a slow, a refused and a hung
// Redis.
//
// Packages that use the shared servers call Main from TestMain so that the
// servers are stopped when the tests end.
//
// It is a module of its own that is never released. Only unreleased modules
// import it (store/redisstore/integration holds the Redis stores' tests): a
// user's go mod tidy loads the tests of the packages it imports, and could
// not fetch this module.
package redistest
