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
// is at most MaxRaw bytes, else its SHA-256 followed by zero bytes up to
// MaxRaw+1 bytes, so that a long subject costs a fixed size however long it
// is, and the holder never keeps the caller's string alive (it must copy a
// short key it keeps). A digest form is one allocation of 65 bytes.
//
// A digest form is longer than any subject kept as it is, so a subject
// never shares state with another's digest (a 32-byte subject equal to the
// SHA-256 of a long one is a subject of its own). Two long subjects share
// state only if their SHA-256 digests collide, which is out of practical
// reach (the Redis store's hash tags rest on the same argument, with 132
// bits).
func Key(key string) string {
	if len(key) <= MaxRaw {
		return key
	}
	var form [MaxRaw + 1]byte
	// sha256.Sum256([]byte(key)) would copy the key first: hash it in place
	// (Sum256 only reads its argument). BenchmarkTakeLongSubject in
	// store/memstore: the copy is an allocation the size of the key per call.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(key), len(key)))
	copy(form[:], sum[:])
	return string(form[:])
}
