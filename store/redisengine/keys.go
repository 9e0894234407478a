package redisengine

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/ratekit/ratekit"
)

const (
	maxRawTag    = 64
	hashedTagLen = 22 // base64url characters of SHA-256: 132 bits
	maxPrefixLen = 32
)

// Tag returns the hash tag of subject: the subject itself when it is 1 to 64
// printable ASCII characters without space, braces or '#', else '#' and 22
// characters of its base64url SHA-256. A raw tag never holds '#', so the two
// forms cannot collide. An empty subject is ratekit.ErrEmptyKey.
func Tag(subject string) (string, error) {
	if subject == "" {
		return "", ratekit.ErrEmptyKey
	}
	if len(subject) <= maxRawTag && safeTag(subject) {
		return subject, nil
	}
	sum := sha256.Sum256([]byte(subject))
	return "#" + base64.RawURLEncoding.EncodeToString(sum[:])[:hashedTagLen], nil
}

// safeTag reports whether s is printable ASCII without space, braces or '#'.
func safeTag(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c > '~' || c == '{' || c == '}' || c == '#' {
			return false
		}
	}
	return true
}

// validatePrefix reports whether p can start every key: 1 to 32 printable
// ASCII characters without space or braces. The error has no "ratekit: "
// prefix.
func validatePrefix(p string) error {
	if p == "" || len(p) > maxPrefixLen {
		return fmt.Errorf("prefix must be 1 to %d characters (got %d)", maxPrefixLen, len(p))
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c > '~' || c == '{' || c == '}' {
			return fmt.Errorf("prefix %q may hold only printable ASCII without space or braces", p)
		}
	}
	return nil
}

// keys returns the keys of one call for tag t: a state key per limit,
// <prefix>:{<tag>}:<id>, then a block key (":block" added) per limit with a
// block, in limit order, then, with ov, an override key (":o" added) per
// limit; in cmd's room when they fit.
func (e *Engine) keys(t string, p *prepared, cmd *Command, ov bool) []string {
	n := len(p.ids) + len(p.blocks)
	if ov {
		n += len(p.ids)
	}
	var keys []string
	if cmd != nil && n <= len(cmd.k) {
		keys = cmd.k[:0]
	} else {
		keys = make([]string, 0, n)
	}
	// with ov, one string holds a limit's override key and, less its ":o",
	// its state key: one allocation for both
	var one [1]string
	overrides := one[:0]
	if ov && len(p.ids) > 1 {
		overrides = make([]string, 0, len(p.ids))
	}
	for _, id := range p.ids {
		if !ov {
			keys = append(keys, e.key(t, id, ""))
			continue
		}
		o := e.key(t, id, ":o")
		keys, overrides = append(keys, o[:len(o)-2]), append(overrides, o)
	}
	for _, i := range p.blocks {
		keys = append(keys, e.key(t, p.ids[i], ":block"))
	}
	return append(keys, overrides...)
}

// key returns the key <prefix>:{<t>}:<id><suffix> of tag t: the state key
// of the limit id names (suffix ""), its block (":block") or its override
// (":o"); built in one allocation.
func (e *Engine) key(t, id, suffix string) string { return e.prefix + ":{" + t + "}:" + id + suffix }

// overrideKey returns the key of the list of tag t's overrides.
func (e *Engine) overrideKey(t string) string { return e.key(t, "o", "") }

// Keys returns the Redis keys that hold subject's state for limits: one state
// key per limit in order, then a block key per limit with a block. They all
// hash to one Redis Cluster slot.
func (e *Engine) Keys(subject string, limits []ratekit.Limit) ([]string, error) {
	t, err := Tag(subject)
	if err != nil {
		return nil, err
	}
	p, err := e.prepare(nil, limits)
	if err != nil {
		return nil, err
	}
	return e.keys(t, p, nil, false), nil
}
