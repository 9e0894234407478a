package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// server is a redis-server this program started on a free loopback port and
// stops by its PID.
type server struct {
	addr    string
	version string
	cmd     *exec.Cmd
	admin   *redis.Client
}

// startRedis starts redis-server on 127.0.0.1 without persistence.
func startRedis() (*server, error) {
	var lastErr error
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command("redis-server",
			"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--save", "", "--appendonly", "no", "--protected-mode", "no",
			"--loglevel", "warning", "--daemonize", "no")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		s := &server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
		s.admin = redis.NewClient(&redis.Options{Addr: s.addr, DisableIdentity: true})
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if err = s.admin.Ping(context.Background()).Err(); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err == nil {
			s.version = infoField(s.admin, "server", "redis_version")
			return s, nil
		}
		lastErr = err
		s.stop()
	}
	return nil, fmt.Errorf("redis-server did not start: %w", lastErr)
}

// stop ends the server by its PID and waits for it.
func (s *server) stop() {
	if s.admin != nil {
		s.admin.Close()
	}
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	}
}

func infoField(c *redis.Client, section, field string) string {
	info := c.Info(context.Background(), section).Val()
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok && k == field {
			return v
		}
	}
	return "?"
}

// resetStats zeroes INFO commandstats.
func (s *server) resetStats() error {
	return s.admin.ConfigResetStat(context.Background()).Err()
}

// processCPU is the redis-server process's user+system CPU time so far
// (INFO cpu), in µs.
func (s *server) processCPU() float64 {
	var total float64
	for _, f := range []string{"used_cpu_user", "used_cpu_sys"} {
		v, _ := strconv.ParseFloat(infoField(s.admin, "cpu", f), 64)
		total += v
	}
	return total * 1e6
}

// commandStats sums calls and usec over INFO commandstats, leaving out the
// commands this program's admin connection sends to measure. Redis 7 counts a
// command a script runs on its own line as well as in the script's usec, so
// calls includes the commands inside scripts and usec counts their time
// twice; scripts is the EVAL/EVALSHA/FCALL calls alone; byCmd is each
// command's calls and usec.
func (s *server) commandStats() (calls, scripts, usec float64, byCmd map[string]cmdStat, err error) {
	info, err := s.admin.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	byCmd = map[string]cmdStat{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		cmd := strings.TrimPrefix(name, "cmdstat_")
		switch cmd {
		case "info", "config|resetstat":
			continue
		}
		script := isScript(cmd)
		var st cmdStat
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				st.calls = n
				calls += n
				if script {
					scripts += n
				}
			case "usec":
				st.usec = n
				usec += n
			}
		}
		byCmd[cmd] = st
	}
	return calls, scripts, usec, byCmd, nil
}
