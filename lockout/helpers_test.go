package lockout_test

import (
	"context"
	"errors"
	"github.com/ratekit/ratekit/store/storetest"
	"io"
	"net/http"
	"testing"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/store/memstore"
)

// ok is the protected handler of the HTTP tests.
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "handler")
})

type reply struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, url string) reply {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(b)}
}

// downStore fails every Reserve, so every Attempt, as an unreachable Redis
// does; errDown's text must never reach a client.
type downStore struct{ *memstore.Store }

func (s downStore) Prepare(limits []ratekit.Limit) (ratekit.Prepared, error) {
	return storetest.FromCalls(s, s.Store).Prepare(limits)
}

var errDown = errors.New("dial tcp: secret")

func (downStore) Reserve(context.Context, string, []ratekit.Limit, int64) (ratekit.Decision, error) {
	return ratekit.Decision{}, errDown
}
