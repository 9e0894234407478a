// Command server is the ratekit demo: a net/http service whose routes are
// rate limited per client IP. It runs on the in-process store unless a Redis
// URL is given, and answers the same either way.
//
//	go run ./examples/server                      # in-process store
//	go run ./examples/server -redis redis://127.0.0.1:6379/0
//	make run ARGS="-quota 2 -window 10s"          # the same through make
//
// Routes: GET / (an index), GET /fixed, /gcra, /sliding, /log, /token, /leaky,
// /multi (two limits at once) and /daily (-quota per calendar day in -zone,
// resetting at its midnight), each limited per client IP, GET
// /inflight?ms=N (at most -quota requests in flight per client IP, each
// held N ms), POST /generate?tokens=N (reserves -quota tokens of a budget of
// 10 × -quota per window, then settles the N generated), POST /login (a
// lockout per account, per password and per IP, counting failures; a
// success sets a trusted-device cookie, ratekit-device-… (one per account),
// with which the account's lockout does not apply to that device), POST
// /password-reset (username and the right password; revokes every trusted
// device of the account, so the try-it path of RevokeDevices), POST
// /verify/send (form destination; a new 6-digit code, answered in the body
// since the demo sends nothing; limited per client IP, per destination and by a
// daily budget of -sms-budget messages) and POST /verify/check
// (destination and code; 3 attempts per code, then the code dies), and GET
// /metrics (Prometheus metrics of every decision), and the admin routes of
// overrides: PUT and DELETE /admin/overrides/{limit}/{client IP}?quota=N
// [&expiry=10m] and GET /admin/overrides, with "Authorization: Bearer
// <-admin-token>". With -debug, every decision is logged.
//
// Flags: -addr (default :8080), -redis (default $REDIS_URL; empty means the
// in-process store), -quota (default 10), -window (default 1m), -zone (the
// time zone of /daily's days and of -sms-budget's, default UTC), -prefix
// (Redis key prefix, default ratekit-demo), -admin-token (default
// $RATEKIT_ADMIN_TOKEN; empty: a random one, logged at start), -device-key
// (the key that signs trusted-device cookies, hex, at least 32 bytes;
// default $RATEKIT_DEVICE_KEY; empty: a random one per process, logged at
// start: instances that share a store must share the key too),
// -sms-budget (verification messages per day, all destinations together,
// default 1000), -debug (decision logs).
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // -zone names a zone on machines without a zone database too
)

type config struct {
	addr, redisURL, prefix string
	adminToken             string
	deviceKey              []byte // signs trusted-device cookies (-device-key)
	quota                  int64
	smsBudget              int64 // verification messages a day (-sms-budget)
	window                 time.Duration
	zone                   *time.Location
	login                  loginLimits
}

func main() {
	c := config{login: defaultLogin}
	flag.StringVar(&c.addr, "addr", ":8080", "listen address")
	flag.StringVar(&c.redisURL, "redis", os.Getenv("REDIS_URL"), "Redis URL (default $REDIS_URL); empty: the in-process store")
	flag.Int64Var(&c.quota, "quota", 10, "requests per window (GCRA: rate per window, burst = quota)")
	flag.DurationVar(&c.window, "window", time.Minute, "window length")
	zone := flag.String("zone", "UTC", "time zone of /daily's days (e.g. America/New_York)")
	flag.StringVar(&c.prefix, "prefix", "ratekit-demo", "Redis key prefix")
	debug := flag.Bool("debug", false, "log every decision (slog, debug level)")
	flag.StringVar(&c.adminToken, "admin-token", os.Getenv("RATEKIT_ADMIN_TOKEN"), "token of the admin routes (default $RATEKIT_ADMIN_TOKEN; empty: a random one, logged)")
	deviceKey := flag.String("device-key", os.Getenv("RATEKIT_DEVICE_KEY"), "key of the trusted-device cookies, hex, at least 32 bytes (default $RATEKIT_DEVICE_KEY; empty: a random one, logged; instances must share one)")
	flag.Int64Var(&c.smsBudget, "sms-budget", 1000, "verification messages sent per day in -zone, all destinations together")
	flag.Parse()
	if *debug {
		slog.SetLogLoggerLevel(slog.LevelDebug)
	}
	var err error
	if c.zone, err = time.LoadLocation(*zone); err != nil {
		fmt.Fprintln(os.Stderr, "server: -zone:", err)
		os.Exit(2)
	}
	if c.deviceKey, err = parseDeviceKey(*deviceKey); err != nil {
		fmt.Fprintln(os.Stderr, "server: -device-key:", err)
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer s.close()
	if c.adminToken == "" {
		c.adminToken = newToken()
		slog.Info("ratekit demo: admin routes (/admin/overrides) take Authorization: Bearer " + c.adminToken)
	}
	if len(c.deviceKey) == 0 {
		c.deviceKey = randomBytes(32)
		slog.Info("ratekit demo: trusted-device cookies are signed with a random key of this process; instances that share a store must share one key "+
			"(-device-key or RATEKIT_DEVICE_KEY), else a cookie set by one is not trusted by another", "device_key", hex.EncodeToString(c.deviceKey))
	}
	slog.Info("ratekit demo: "+s.where, "addr", c.addr, "quota", c.quota, "window", c.window)

	handler, err := newHandler(s, c)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: c.addr, Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// parseDeviceKey decodes -device-key: "" (a random key is made at start) or
// at least 32 bytes in hex.
func parseDeviceKey(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("must be hex (e.g. openssl rand -hex 32)")
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("has %d bytes, want at least 32 (e.g. openssl rand -hex 32)", len(key))
	}
	return key, nil
}
