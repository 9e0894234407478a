package redistest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Kind says what is behind a Server.
type Kind string

// The kinds of server.
const (
	Real     Kind = "redis-server" // a private redis-server started here
	External Kind = "REDIS_ADDR"   // a server someone else runs
)

// Server is a standalone Redis for tests.
type Server struct {
	Addr string
	Kind Kind
}

// NewClient returns a client of the server with ContextTimeoutEnabled set,
// as redisstore.New requires, and AutoPipelineOptions unless opts set their
// own (pipelining); opts may be nil. The caller closes it.
func (s *Server) NewClient(opts *redis.Options) *redis.Client {
	o := redis.Options{}
	if opts != nil {
		o = *opts
	}
	o.ContextTimeoutEnabled = true
	if o.AutoPipelineOptions == nil {
		o.AutoPipelineOptions = pipelining()
	}
	return s.NewClientAsGiven(&o)
}

// pipelining returns the AutoPipelineOptions of redisstore.ClientOptions,
// which this module cannot import: the store's tests run on the production
// setup (TestHarnessPipelinesAsClientOptions holds the two equal).
func pipelining() *redis.AutoPipelineOptions {
	return &redis.AutoPipelineOptions{MaxConcurrentBatches: 2, MaxBatchSize: 32, Unordered: true}
}

// NewClientAsGiven is NewClient without the default: opts are used as given
// (only Addr is set), so ContextTimeoutEnabled stays false unless opts set
// it, as in tests of a client redisstore.New rejects. The caller closes it.
func (s *Server) NewClientAsGiven(opts *redis.Options) *redis.Client {
	o := redis.Options{}
	if opts != nil {
		o = *opts
	}
	o.Addr = s.Addr
	return redis.NewClient(&o)
}

var (
	mu         sync.Mutex
	standalone *Server
	standErr   error
	standProc  *process
	cluster    *Cluster
	clusterErr error
	noticeOnce sync.Once
)

// Required reports whether RATEKIT_REQUIRE_REDIS=1: a missing redis-server is
// then a failure, never a skip.
func Required() bool { return os.Getenv("RATEKIT_REQUIRE_REDIS") == "1" }

// errNoServer reports a machine without redis-server, when not Required.
var errNoServer = errors.New("redis-server is not on PATH; install it (Debian: apt-get install redis-server) or set REDIS_ADDR to run this test")

// Standalone returns the test binary's shared standalone server: the one at
// REDIS_ADDR when set, else a private redis-server (see the package doc).
// Without redis-server the test skips with a notice, or fails when Required:
// miniredis keeps no real time, so it stands in only for fake-clock tests,
// which start their own. Tests keep apart by using Prefix.
func Standalone(t testing.TB) *Server {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if standalone == nil && standErr == nil {
		standalone, standErr = startStandalone()
	}
	if errors.Is(standErr, errNoServer) {
		noticeOnce.Do(func() { fmt.Fprintln(os.Stderr, "redistest: "+errNoServer.Error()+"; the tests that need it skip") })
		t.Skip("redistest: " + errNoServer.Error())
	}
	if standErr != nil {
		t.Fatalf("redistest: %v", standErr)
	}
	return standalone
}

// RealStandalone is Standalone.
func RealStandalone(t testing.TB) *Server {
	t.Helper()
	return Standalone(t)
}

func startStandalone() (*Server, error) {
	if addr := os.Getenv("REDIS_ADDR"); addr != "" {
		return &Server{Addr: addr, Kind: External}, nil
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		if Required() {
			return nil, fmt.Errorf("RATEKIT_REQUIRE_REDIS=1 but redis-server is not on PATH: %w", err)
		}
		return nil, errNoServer
	}
	var lastErr error
	for range 5 {
		port, err := freePort(false)
		if err != nil {
			return nil, err
		}
		p, err := startProcess(port)
		if err == nil {
			standProc = p
			return &Server{Addr: p.addr, Kind: Real}, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// Main runs the tests of a package and then stops the servers the harness
// started. Call it from TestMain: func TestMain(m *testing.M) { redistest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	stopAll()
	os.Exit(code)
}

func stopAll() {
	mu.Lock()
	defer mu.Unlock()
	if standProc != nil {
		standProc.stop()
	}
	if cluster != nil {
		cluster.stop()
	}
}

// Prefix returns a fresh random key prefix, so tests never touch each other's
// keys (or keys the harness did not create) and nothing needs FLUSHDB.
func Prefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "rkt" + hex.EncodeToString(b[:])
}
