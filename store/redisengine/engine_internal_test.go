package redisengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ratekit/ratekit"
)

// TestNeverRan classifies errors: only those proving the call did not run
// may be sent again.
func TestNeverRan(t *testing.T) {
	reply := func(msg string) error { return &ReplyError{Msg: msg, Err: errors.New(msg)} }
	cases := []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: errors.New("refused")}, true},
		{NotSent(errors.New("pool timeout")), true},
		{fmt.Errorf("wrapped: %w", NotSent(errors.New("pool timeout"))), true},
		{reply("LOADING Redis is loading the dataset in memory"), true},
		{reply("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{reply("CLUSTERDOWN The cluster is down"), true},
		{reply("MASTERDOWN Link with MASTER is down"), true},
		{reply("BUSY Redis is busy running a script"), true},
		{&net.OpError{Op: "read", Err: errors.New("reset")}, false},
		{io.EOF, false},
		{context.DeadlineExceeded, false},
		{reply("ERR something"), false},
		{reply("BUSYKEY Target key name already exists"), false},
		{errors.New("LOADING but not a reply"), false},
	}
	for _, tc := range cases {
		if got := neverRan(tc.err); got != tc.want {
			t.Errorf("neverRan(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestUnsupported: the replies that send the engine to scripts.
func TestUnsupported(t *testing.T) {
	for msg, want := range map[string]bool{
		"ERR unknown command `FCALL`, with args beginning with: ":                true, // Redis 6.2
		"ERR unknown command 'fcall', with args beginning with: ":                true,
		"ERR unknown subcommand 'LOAD'. Try FUNCTION HELP.":                      true,
		"NOPERM this user has no permissions to run the 'function|load' command": true,
		"ERR Function not found":                                                 false,
		"ERR Error compiling function":                                           false,
	} {
		if got := unsupported(&ReplyError{Msg: msg}); got != want {
			t.Errorf("unsupported(%q) = %v, want %v", msg, got, want)
		}
	}
}

// TestPrepareRefusesOneLimitTwice: a set with one limit twice is an error
// from Prepare, never a call.
func TestPrepareRefusesOneLimitTwice(t *testing.T) {
	e, _ := New(Options{})
	api := ratekit.FixedWindow(100, time.Minute).Named("api")
	if _, err := e.Prepare(nil, []ratekit.Limit{api, api}); err == nil {
		t.Error("a set with one limit twice was accepted")
	}
}

// flushingConn is a Conn whose server loses its functions again right
// after each load: every FCALL is "Function not found".
type flushingConn struct{ sent []string }

func (f *flushingConn) Eval(_ context.Context, cmd *Command) (any, error) {
	f.sent = append(f.sent, cmd.Name)
	if cmd.Name == "FCALL" {
		return nil, &ReplyError{Msg: "ERR Function not found"}
	}
	return int64(1), nil
}

func (f *flushingConn) LoadLibrary(context.Context, string) error {
	f.sent = append(f.sent, "FUNCTION LOAD")
	return nil
}

// TestFlushedAgainRunsScript: a call whose function is gone again after
// the library was loaded runs as a script, and the engine keeps trying
// functions first on the next call.
func TestFlushedAgainRunsScript(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &flushingConn{}
	for range 2 {
		if reply, err := e.once(context.Background(), c, 0, &Command{}); err != nil || reply != int64(1) {
			t.Fatalf("once: %v, %v; want the script's reply", reply, err)
		}
	}
	want := "FCALL FUNCTION LOAD FCALL EVALSHA FCALL FUNCTION LOAD FCALL EVALSHA"
	if got := strings.Join(c.sent, " "); got != want {
		t.Fatalf("sent %s, want %s", got, want)
	}
}
