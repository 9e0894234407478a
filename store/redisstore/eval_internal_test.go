package redisstore

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratekit/ratekit/store/redisstore/redistest"
)

// TestNeverRan classifies errors: only those proving the script did not run
// may be sent again. Redis errors are real replies, made by a script.
func TestNeverRan(t *testing.T) {
	c := redistest.Standalone(t).NewClient(nil)
	t.Cleanup(func() { c.Close() })
	reply := func(msg string) error {
		return c.Eval(context.Background(), "return redis.error_reply(ARGV[1])", nil, msg).Err()
	}
	cases := []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: errors.New("refused")}, true},
		{redis.ErrPoolTimeout, true},
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
	}
	for _, tc := range cases {
		if tc.err == nil {
			t.Fatal("no error made")
		}
		if got := neverRan(tc.err); got != tc.want {
			t.Errorf("neverRan(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
