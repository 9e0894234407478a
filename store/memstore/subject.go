package memstore

import (
	"crypto/sha256"
	"unsafe"
)

// maxRawSubject is the longest subject kept as it is; a longer one is held
// as its digest. 64 bytes covers IPv6 addresses, UUIDs and most API keys and
// user IDs, so the common case costs no hashing.
const maxRawSubject = 64

// subject returns the form in which the state of key is held: key itself
// when it is at most maxRawSubject bytes, else its SHA-256 (32 bytes), so
// that a long subject costs the store a fixed 32 bytes however long it is,
// and the store never keeps the caller's string alive.
//
// Two subjects share state only if they are equal or their digests collide:
// two digests collide only by a SHA-256 collision, and a digest equals a raw
// subject only by a SHA-256 preimage; both are out of practical reach (the
// Redis store's hash tags rest on the same argument, with 132 bits).
func subject(key string) string {
	if len(key) <= maxRawSubject {
		return key
	}
	// sha256.Sum256([]byte(key)) would copy the key first: hash it in place
	// (Sum256 only reads its argument).
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(key), len(key)))
	return string(sum[:])
}
