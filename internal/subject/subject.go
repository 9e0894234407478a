// Package subject gives the form in which the in-process stores hold a
// subject's state (memstore, and the deny cache).
package subject

import (
	"crypto/sha256"
	"unsafe"
)

// MaxRaw is the longest subject kept as it is; a longer one is held as its
// digest. 64 bytes covers IPv6 addresses, UUIDs and most API keys and user
// IDs, so the common case costs no hashing and no allocation.
const MaxRaw = 64

// Key returns the form in which the state of key is held: key itself when it
// is at most MaxRaw bytes, else its SHA-256 zero-padded to MaxRaw+1 bytes
// (one allocation), so that a long subject costs a fixed size and the holder
// never keeps the caller's string alive (it must copy a short key it keeps).
// A digest form is longer than any raw subject, so the two never share
// state; two long subjects share it only if their SHA-256 digests collide.
func Key(key string) string {
	if len(key) <= MaxRaw {
		return key
	}
	var form [MaxRaw + 1]byte
	// Hashed in place: []byte(key) copies it, an allocation the size of the
	// key per call (BenchmarkTakeLongSubject in store/memstore).
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(key), len(key)))
	copy(form[:], sum[:])
	return string(form[:])
}
