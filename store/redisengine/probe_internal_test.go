package redisengine

import (
	"errors"
	"strings"
	"testing"
)

// TestPermissionHint: the replies of Redis 7.0 and of 7.2 and later each
// get their fix; a user name that contains "key" does not make a command
// refusal look like a key refusal.
func TestPermissionHint(t *testing.T) {
	for _, c := range []struct{ reply, want string }{
		{"NOPERM this user has no permissions to access one of the keys used as arguments", "~app:*"},
		{"NOPERM No permissions to access a key", "~app:*"},
		{"NOPERM this user has no permissions to run the 'fcall' command", "+fcall"},
		{"NOPERM User apikey has no permissions to run the 'fcall' command", "+fcall"},
		{"ERR The user executing the script can't run this command or subcommand script: ratekit_x_decide, on @user_function:126.", "+@read"},
		{"ERR ACL failure in script: User x has no permissions to run the 'hset' command script: ratekit_x_decide", "+@read"},
		{"ERR something else", ""},
	} {
		hint := permissionHint(&ReplyError{Msg: c.reply}, "app")
		if c.want == "" && hint != "" || c.want != "" && !strings.Contains(hint, c.want) {
			t.Errorf("%q: hint %q, want it to name %q", c.reply, hint, c.want)
		}
	}
	if unsupported(&ReplyError{Msg: "NOPERM No permissions to access a key"}) {
		t.Error("a key refusal switches the engine to scripts")
	}
	if !unsupported(&ReplyError{Msg: "NOPERM User apikey has no permissions to run the 'fcall' command"}) {
		t.Error("a refused FCALL does not switch the engine to scripts")
	}
	if permissionHint(errors.New("dial tcp: refused"), "app") != "" {
		t.Error("a dial error got a permission hint")
	}
}
