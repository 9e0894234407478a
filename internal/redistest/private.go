package redistest

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A PrivateServer is a redis-server that one test owns: started with its own
// configuration, stopped by PID when the test ends, and able to be frozen
// (SIGSTOP) and thawed (SIGCONT) to play a hung Redis, or killed (SIGKILL)
// and restarted on the same port to play a crash.
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

// Kill stops the server with SIGKILL, by its PID, and returns when the
// process has exited: connections are refused, as after a crash. Restart
// starts it again.
func (s *PrivateServer) Kill() error {
	if err := s.signal(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-s.proc.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("redistest: redis-server on %s still runs 5 s after SIGKILL", s.Addr)
	}
}

// Restart starts the server again on the same address with the same
// configuration and no data (the harness's servers keep nothing on disk: no
// keys, no script cache, no Functions), as after a crash without
// persistence. A server still running is killed first (SIGKILL, by its
// PID). It returns when the new server answers. It is not safe to call while
// another goroutine freezes, thaws or kills the server.
func (s *PrivateServer) Restart() error {
	s.proc.stop() // kills it if Kill has not; removes its directory
	_, port, _ := net.SplitHostPort(s.Addr)
	n, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("redistest: address %s: %w", s.Addr, err)
	}
	p, err := startProcess(n, s.extra...)
	if err != nil {
		return fmt.Errorf("redistest: restart on %s: %w", s.Addr, err)
	}
	s.proc = p
	return nil
}
