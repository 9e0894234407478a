package denycache

import (
	"crypto/sha256"
	"unsafe"
)

// maxRawSubject is the longest subject kept as it is; a longer one is held
// as its digest, as memstore does.
const maxRawSubject = 64

// subject returns the form in which key's entries are held: key itself when
// it is at most maxRawSubject bytes, else its SHA-256 (32 bytes), so that a
// long subject costs the cache 32 bytes however long it is. Two subjects
// share entries only if they are equal, or by a SHA-256 collision or
// preimage, both out of practical reach.
//
// subject is inlined into its callers so that a digest used only to look an
// entry up stays on the stack; entries keep a copy (see put).
func subject(key string) string {
	if len(key) <= maxRawSubject {
		return key
	}
	// sha256.Sum256([]byte(key)) would copy the key first: hash it in place
	// (Sum256 only reads its argument).
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(key), len(key)))
	return string(sum[:])
}
