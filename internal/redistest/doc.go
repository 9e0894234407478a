// Package redistest provides Redis servers for ratekit's tests.
//
// Standalone returns a server shared by a test binary: the one at REDIS_ADDR
// when set, else a private redis-server on a random loopback port. Without
// redis-server the test skips, or fails with RATEKIT_REQUIRE_REDIS=1 (set in
// CI). Cluster does the same for a real 3-master Redis Cluster; Private,
// StartReplicated and the fault proxies play a frozen, killed, slow, refused
// or hung Redis; NewClock and NewRedisClock drive miniredis for fake-clock
// tests. Packages that use the shared servers call Main from TestMain.
//
// It is a module of its own that is never released: only unreleased modules
// import it. See docs/testing.md#real-redis-started-by-the-harness in the
// repository.
package redistest
