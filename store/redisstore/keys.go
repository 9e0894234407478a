package redisstore

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

// tag returns the hash tag for subject: the subject itself when it is short
// and safe, else '#' and a truncated base64url SHA-256. A raw tag never holds
// '#', so the two forms cannot collide.
func tag(subject string) (string, error) {
	if subject == "" {
		return "", ratekit.ErrEmptyKey
	}
	if len(subject) <= maxRawTag && safeTag(subject) {
		return subject, nil
	}
	sum := sha256.Sum256([]byte(subject))
	var buf [1 + 43]byte
	buf[0] = '#'
	base64.RawURLEncoding.Encode(buf[1:], sum[:])
	return string(buf[:1+hashedTagLen]), nil
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
// ASCII characters without space or braces.
func validatePrefix(p string) error {
	if p == "" || len(p) > maxPrefixLen {
		return fmt.Errorf("ratekit: redisstore: prefix must be 1 to %d characters (got %d)", maxPrefixLen, len(p))
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c > '~' || c == '{' || c == '}' {
			return fmt.Errorf("ratekit: redisstore: prefix %q may hold only printable ASCII without space or braces", p)
		}
	}
	return nil
}

// stateKey is <prefix>:{<tag>}:<name>:<algorithm>:<fingerprint>.
func (s *Store) stateKey(tag string, l ratekit.Limit) string {
	return s.prefix + ":{" + tag + "}:" + l.Spec().ID
}

// blockKey is the state key and ":block".
func (s *Store) blockKey(tag string, l ratekit.Limit) string {
	return s.stateKey(tag, l) + ":block"
}

// Keys returns the Redis keys that hold subject's state for limits: one state
// key per limit in order, then a block key per limit with a block. They all
// hash to one Redis Cluster slot.
func (s *Store) Keys(subject string, limits []ratekit.Limit) ([]string, error) {
	t, err := tag(subject)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(limits), len(limits)+blocks(limits))
	for i, l := range limits {
		keys[i] = s.stateKey(t, l)
	}
	for _, l := range limits {
		if l.Spec().Block > 0 {
			keys = append(keys, s.blockKey(t, l))
		}
	}
	return keys, nil
}
