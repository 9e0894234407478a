// Package subject gives the form in which the in-process stores hold a
// subject's state (memstore, and the deny cache).
package subject

import (
	"crypto/sha256"
	"unsafe"
)

// MaxRaw is the longest subject kept as it is (IPv6 addresses, UUIDs, most
// API keys and user IDs); a longer one is held as its digest.
const MaxRaw = 64

// Key returns the form in which the state of key is held: key itself when it
// is at most MaxRaw bytes (the holder copies it to keep it), else its SHA-256
// zero-padded to MaxRaw+1 bytes, a length no raw subject has.
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
