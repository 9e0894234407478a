package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// process is one redis-server started by the harness.
type process struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startProcess starts redis-server on 127.0.0.1:port in its own temporary
// directory with the extra arguments, and waits until it answers PING.
func startProcess(port int, extra ...string) (*process, error) {
	dir, err := os.MkdirTemp("", "ratekit-redis-")
	if err != nil {
		return nil, err
	}
	return launch(dir, port, append([]string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--dir", dir, "--save", "", "--appendonly", "no",
		"--logfile", filepath.Join(dir, "redis.log"),
	}, extra...)...)
}

// launch runs redis-server with args, listening on 127.0.0.1:port and
// logging to dir/redis.log, and waits until it answers PING. On failure it
// stops the process and removes dir.
func launch(dir string, port int, args ...string) (*process, error) {
	cmd := exec.Command("redis-server", args...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &process{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	if err := p.waitReady(5 * time.Second); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// poll calls check every period until it returns nil or limit has passed,
// and returns check's last error. It waits on child processes, not on a
// race in the code under test.
func poll(limit, period time.Duration, check func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(period)
	}
}

func (p *process) waitReady(limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-p.done:
			log, _ := os.ReadFile(filepath.Join(p.dir, "redis.log"))
			return fmt.Errorf("redistest: redis-server on %s exited: %s", p.addr, tail(log))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: redis-server on %s not ready: %w", p.addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a child process, not a test race
	}
}

// stop kills the server by its PID and removes its directory.
func (p *process) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	os.RemoveAll(p.dir)
}

// freePort returns a loopback port that was free a moment ago; when bus is
// set, port+10000 (the cluster bus) was free too.
func freePort(bus bool) (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !bus {
			return port, nil
		}
		if port+10000 > 65535 {
			continue
		}
		if b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000)); err == nil {
			b.Close()
			return port, nil
		}
	}
	return 0, errors.New("redistest: no free port")
}

func tail(b []byte) string {
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(b)
}
