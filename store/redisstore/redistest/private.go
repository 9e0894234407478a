package redistest

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A PrivateServer is a redis-server that one test owns: started with its own
// configuration, stopped by PID when the test ends, and able to be frozen
// (SIGSTOP) and thawed (SIGCONT) to play a hung Redis.
type PrivateServer struct {
	Server
	proc  *process
	extra []string
}

// Private starts a redis-server for t alone on a random loopback port, with
// extra configuration arguments (e.g. "--maxmemory", "4mb"). Without
// redis-server it skips with a notice, or fails when Required.
func Private(t testing.TB, extra ...string) *PrivateServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if Required() {
			t.Fatalf("redistest: RATEKIT_REQUIRE_REDIS=1 but redis-server is not on PATH: %v", err)
		}
		t.Skip("redistest: " + errNoServer.Error())
	}
	var lastErr error
	for range 5 {
		port, err := freePort(false)
		if err != nil {
			t.Fatal(err)
		}
		p, err := startProcess(port, extra...)
		if err == nil {
			s := &PrivateServer{Server: Server{Addr: p.addr, Kind: Real}, proc: p, extra: extra}
			t.Cleanup(func() {
				s.Thaw()
				s.proc.stop()
			})
			return s
		}
		lastErr = err
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

// Restart kills the server (SIGKILL, by its PID) and starts a new one on the
// same address with the same configuration, waiting until it answers. The
// harness's servers keep nothing on disk, so the new one starts empty: no
// keys, no script cache, no Functions, as after a crash without persistence.
func (s *PrivateServer) Restart() error {
	port, err := strconv.Atoi(s.Addr[strings.LastIndexByte(s.Addr, ':')+1:])
	if err != nil {
		return err
	}
	s.proc.stop()
	p, err := startProcess(port, s.extra...)
	if err != nil {
		return fmt.Errorf("redistest: restart on %s: %w", s.Addr, err)
	}
	s.proc = p
	return nil
}

// Freeze stops the server's process (SIGSTOP): connections stay open and
// nothing answers, as with a hung Redis.
func (s *PrivateServer) Freeze() error { return s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (s *PrivateServer) Thaw() error { return s.signal(syscall.SIGCONT) }

func (s *PrivateServer) signal(sig syscall.Signal) error {
	if s.proc.cmd.Process == nil {
		return errors.New("redistest: no process")
	}
	if err := s.proc.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("redistest: signal %v to redis-server on %s: %w", sig, s.Addr, err)
	}
	return nil
}
