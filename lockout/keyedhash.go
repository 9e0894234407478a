package lockout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"

	"github.com/ratekit/ratekit"
)

// KeyedHash returns a key function that keys by an HMAC-SHA-256 of what key
// returns, under secret (at least 32 random bytes, kept secret), as 22
// base64url characters: it lets a Lockout count by a value that must not be
// stored, such as the password a login tries. Counting failures per
// password across accounts (a Lockout keyed by KeyedHash(secret,
// bodykey.FormValue("password", bodykey.Exact()))) catches password
// spraying: one password tried against many accounts. The store then holds
// a keyed hash of every wrong password for its window; whoever has both the
// store and the secret can test guesses against them, so keep the secret
// out of the store's reach. A short secret is a programming error: the
// function panics.
func KeyedHash(secret []byte, key ratekit.KeyFunc) ratekit.KeyFunc {
	if len(secret) < minKeyBytes || key == nil {
		panic("ratekit: KeyedHash needs a key function and a secret of at least 32 bytes")
	}
	secret = append([]byte(nil), secret...)
	return func(r *http.Request) (string, error) {
		k, err := key(r)
		if err != nil || k == "" {
			return "", err
		}
		h := hmac.New(sha256.New, secret)
		h.Write([]byte(k))
		return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16]), nil
	}
}
