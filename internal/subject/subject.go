// Package subject gives the form in which the in-process stores hold a
// subject's state (memstore, and the deny cache).
package subject

import (
	"crypto/sha256"
	"unsafe"
)

// MaxRaw is the longest subject kept as it is; a longer one is held as its
// digest. 64 bytes covers IPv6 addresses, UUIDs and most API keys and user
// IDs, so the common case costs no hashing.
const MaxRaw = 64

// Key returns the form in which the state of key is held: key itself when it
// is at most MaxRaw bytes, else its SHA-256 (32 bytes), so that a long
// subject costs a fixed 32 bytes however long it is, and the holder never
// keeps the caller's string alive (it must copy a short key it keeps).
//
// Two subjects share state only if they are equal or their digests collide:
// two digests collide only by a SHA-256 collision, and a digest equals a raw
// subject only by a SHA-256 preimage; both are out of practical reach (the
// Redis store's hash tags rest on the same argument, with 132 bits).
//
// Key is small enough to be inlined, so a digest used only to look state up
// stays on the caller's stack.
func Key(key string) string {
	if len(key) <= MaxRaw {
		return key
	}
	// sha256.Sum256([]byte(key)) would copy the key first: hash it in place
	// (Sum256 only reads its argument).
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(key), len(key)))
	return string(sum[:])
}
