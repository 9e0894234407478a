// Package redistest provides Redis servers for ratekit's tests.
//
// Standalone returns a server shared by a test binary: the one at REDIS_ADDR
// when set, else a private redis-server started on a random loopback port in
// a temporary directory (stopped by PID when the binary ends), else miniredis
// with a printed notice. With RATEKIT_REQUIRE_REDIS=1 (set in CI) a missing
// redis-server fails the test instead of falling back. Cluster does the same
// for a real 3-master Redis Cluster (REDIS_CLUSTER_ADDRS, or redis-server and
// redis-cli on PATH); there is no fallback for a cluster, so without the
// binaries and without RATEKIT_REQUIRE_REDIS it skips with a notice.
//
// The clients that Server and Cluster make (NewClient, Masters) set
// ContextTimeoutEnabled, which redisstore.New requires; NewClientAsGiven
// leaves the options as the test gives them.
//
// Packages that use the shared servers call Main from TestMain so that the
// servers are stopped when the tests end.
package redistest
