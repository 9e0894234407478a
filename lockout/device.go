package lockout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Devices configures the trusted devices of a Lockout (Config.Devices).
// After a successful login the Lockout can sign a device token for the
// account, sent as a cookie; an attempt that carries a valid token for the
// account it names counts against that device's own allowance, not the
// account's windows, so failures made elsewhere never lock out a device the
// owner has logged in from. Keys is required; the zero value of every other
// field is its default.
type Devices struct {
	// Keys sign and verify device tokens: Keys[0] signs, every key
	// verifies, so a new key goes first and a retired one is dropped once
	// the tokens it signed should no longer be trusted. 1 to 8 keys of at
	// least 32 random bytes each, kept secret.
	Keys [][]byte
	// Failures is how many failed attempts a device may make in
	// FailureWindow (default 10, at most 100); the next attempt revokes
	// its token and is counted as an attempt without one.
	Failures int64
	// FailureWindow is the span Failures counts (default 24 hours).
	FailureWindow time.Duration
	// Lifetime is how long a token stays valid (default 30 days, at most
	// 365 days).
	Lifetime time.Duration
	// MaxDevices is how many trusted devices an account may have at once
	// (default 5, at most 16); a login beyond them gets no token until one
	// expires or is revoked. An account gets at most 2·MaxDevices new
	// trusted devices in any 24 hours.
	MaxDevices int
	// Cookie is the stem of the cookies' names (default "ratekit-device"):
	// each account has a cookie of its own, "__Host-<Cookie>-<11 characters
	// of a SHA-256 of the lockout's name and the account>", so that several
	// accounts can log in from one browser, and a site on another subdomain
	// cannot set it. Whoever sees a browser's cookie headers can test
	// guessed account names against it.
	Cookie string
	// InsecureCookie leaves the cookie's Secure attribute and the __Host-
	// prefix off, for plain HTTP in development only: a token sent in clear
	// can be stolen.
	InsecureCookie bool
}

// Bounds and defaults of Devices.
const (
	maxKeys         = 8
	minKeyBytes     = 32
	maxFailures     = 100
	maxDevices      = 16
	slotCount       = 3 * maxDevices // an account's slots, whatever MaxDevices: revoked slots wait out their tokens
	maxTokenBytes   = 128            // longer tokens are not read
	maxCookies      = 4              // cookies of an account's name that are read
	tokenVersion    = "1"
	slotMargin      = time.Minute // a slot, and its revocation, outlive the token by this much
	defaultCookie   = "ratekit-device"
	defaultLifetime = 30 * 24 * time.Hour
)

// withDefaults returns d with its defaults filled in.
func (d Devices) withDefaults() Devices {
	if d.Failures == 0 {
		d.Failures = 10
	}
	if d.FailureWindow == 0 {
		d.FailureWindow = 24 * time.Hour
	}
	if d.Lifetime == 0 {
		d.Lifetime = defaultLifetime
	}
	if d.MaxDevices == 0 {
		d.MaxDevices = 5
	}
	if d.Cookie == "" {
		d.Cookie = defaultCookie
	}
	return d
}

// problems reports what is wrong with d (defaults filled in) through bad.
func (d Devices) problems(bad func(field, reason string)) {
	if len(d.Keys) == 0 || len(d.Keys) > maxKeys {
		bad("devices keys", fmt.Sprintf("must be 1 to %d keys (got %d); Keys[0] signs, all verify", maxKeys, len(d.Keys)))
	}
	for i, k := range d.Keys {
		if len(k) < minKeyBytes {
			bad(fmt.Sprintf("devices key %d", i+1), fmt.Sprintf("has %d bytes; use at least %d random bytes (crypto/rand)", len(k), minKeyBytes))
		}
	}
	if d.Failures < 1 || d.Failures > maxFailures {
		bad("devices failures", fmt.Sprintf("must be between 1 and %d (got %d)", maxFailures, d.Failures))
	}
	if d.FailureWindow < time.Second || d.FailureWindow > 366*24*time.Hour || d.FailureWindow%time.Millisecond != 0 {
		bad("devices failure window", fmt.Sprintf("must be whole milliseconds from 1s to 8784h (got %s)", d.FailureWindow))
	}
	if d.Lifetime < time.Minute || d.Lifetime > 365*24*time.Hour || d.Lifetime%time.Second != 0 {
		bad("devices lifetime", fmt.Sprintf("must be whole seconds from 1m to 8760h (got %s)", d.Lifetime))
	}
	if d.MaxDevices < 1 || d.MaxDevices > maxDevices {
		bad("devices max devices", fmt.Sprintf("must be between 1 and %d (got %d)", maxDevices, d.MaxDevices))
	}
	if d.Cookie != "" && !validCookieName(d.Cookie) {
		bad("devices cookie", fmt.Sprintf("%q is not a cookie name; use up to 48 letters, digits, '-' and '_'", d.Cookie))
	}
}

// copyKeys returns d with Keys copied, so that the caller's slices can
// change without changing the Lockout.
func (d Devices) copyKeys() Devices {
	keys := make([][]byte, len(d.Keys))
	for i, k := range d.Keys {
		keys[i] = append([]byte(nil), k...)
	}
	d.Keys = keys
	return d
}

// validCookieName reports whether name is a token of RFC 6265's cookie-name.
func validCookieName(name string) bool {
	if len(name) > 48 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// A device token is "1.<slot>.<issued>.<expires>.<MAC>", the times in Unix
// seconds, the MAC an HMAC-SHA-256, base64url without padding, over the
// lockout's name, the account and the rest. It names its slot of the
// account's trusted devices; the account is not in it (it is in the MAC),
// so a token is trusted only for the account an attempt names.

// sign returns the token of slot for account, issued at now, valid until
// expires.
func (lo *Lockout) sign(account string, slot int, now, expires time.Time) string {
	body := tokenVersion + "." + strconv.Itoa(slot) + "." + strconv.FormatInt(now.Unix(), 10) + "." + strconv.FormatInt(expires.Unix(), 10)
	return body + "." + base64.RawURLEncoding.EncodeToString(lo.mac(lo.devices.Keys[0], account, body))
}

// mac is the MAC of a token's body for account under key.
func (lo *Lockout) mac(key []byte, account, body string) []byte {
	h := hmac.New(sha256.New, key)
	var n [8]byte
	for _, part := range []string{lo.cfg.Name, account, body} { // each length-prefixed: no two inputs run together
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return h.Sum(nil)
}

// parse returns the parts of token that can be checked without the
// account: its body, MAC and slot, when it is well formed, unexpired at
// now, issued no later than slotMargin from now (the clocks of instances
// may differ that much), and valid for no longer than Lifetime (a token
// signed under a longer one would outlive its revocation); ok is false for
// anything else, read at a bounded cost.
func (lo *Lockout) parse(token string, now time.Time) (body string, mac []byte, slot int, ok bool) {
	if len(token) > maxTokenBytes {
		return "", nil, 0, false
	}
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return "", nil, 0, false
	}
	body, sig := token[:i], token[i+1:]
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || len(mac) != sha256.Size {
		return "", nil, 0, false
	}
	parts := strings.Split(body, ".")
	if len(parts) != 4 || parts[0] != tokenVersion {
		return "", nil, 0, false
	}
	slot, err = strconv.Atoi(parts[1])
	if err != nil || slot < 0 || slot >= len(lo.slots) || parts[1] != strconv.Itoa(slot) {
		return "", nil, 0, false
	}
	issued, err1 := strconv.ParseInt(parts[2], 10, 64)
	expires, err2 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || issued > expires || expires-issued > int64(lo.devices.Lifetime/time.Second) ||
		!now.Before(time.Unix(expires, 0)) || time.Unix(issued, 0).After(now.Add(slotMargin)) {
		return "", nil, 0, false
	}
	return body, mac, slot, true
}

// verify returns the slot token names when it is a token some key signed
// for account (see parse); ok is false for anything else.
func (lo *Lockout) verify(account, token string, now time.Time) (slot int, ok bool) {
	body, got, slot, ok := lo.parse(token, now)
	if !ok || account == "" {
		return 0, false
	}
	trusted := false
	for _, k := range lo.devices.Keys { // every key, so the time taken does not tell which one
		trusted = hmac.Equal(got, lo.mac(k, account, body)) || trusted
	}
	return slot, trusted
}

// CookieName returns the name of account's device cookie (see
// Devices.Cookie); "" without Config.Devices.
func (lo *Lockout) CookieName(account string) string {
	if lo.slots == nil {
		return ""
	}
	sum := sha256.Sum256([]byte(lo.cfg.Name + "\x00" + account))
	return lo.cookieStem() + base64.RawURLEncoding.EncodeToString(sum[:8])
}

// cookieStem is what every account's cookie name starts with.
func (lo *Lockout) cookieStem() string {
	if lo.devices.InsecureCookie {
		return lo.devices.Cookie + "-"
	}
	return "__Host-" + lo.devices.Cookie + "-"
}

// DeviceCookie returns account's device cookie carrying token, a device
// token of TrustDevice, until expires: HttpOnly, Secure and __Host- (unless
// Devices.InsecureCookie), SameSite=Strict, for every path. With expires
// zero (and token "") it is the cookie that deletes the browser's.
func (lo *Lockout) DeviceCookie(account, token string, expires time.Time) *http.Cookie {
	c := &http.Cookie{Name: lo.CookieName(account), Value: token, Path: "/", HttpOnly: true,
		Secure: !lo.devices.InsecureCookie, SameSite: http.SameSiteStrictMode}
	if expires.IsZero() {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	return c
}

// mayCarryToken reports whether r has a device cookie of some account whose
// value is a well-formed, unexpired token: what can be known before the
// account is read.
func (lo *Lockout) mayCarryToken(r *http.Request) bool {
	stem, now := lo.cookieStem(), lo.now()
	for _, c := range r.Cookies() {
		if strings.HasPrefix(c.Name, stem) {
			if _, _, _, ok := lo.parse(c.Value, now); ok {
				return true
			}
		}
	}
	return false
}

// deviceToken returns the first of r's cookies of account's name (at most
// maxCookies of them) that is a token valid for account now, with its slot
// and ok; or, when none is, the first of them and not ok ("" when r has
// none): one planted under a longer path, which browsers send first, does
// not hide the owner's.
func (lo *Lockout) deviceToken(r *http.Request, account string) (token string, slot int, ok bool) {
	if lo.slots == nil {
		return "", 0, false
	}
	now := lo.now()
	for i, c := range r.CookiesNamed(lo.CookieName(account)) {
		if i == maxCookies {
			break
		}
		if i == 0 {
			token = c.Value
		}
		if slot, ok := lo.verify(account, c.Value, now); ok {
			return c.Value, slot, true
		}
	}
	return token, 0, false
}
