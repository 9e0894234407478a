package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"sync"
	"time"
)

// codeLifetime is how long a verification code can be used.
const codeLifetime = 10 * time.Minute

// A code is a destination's pending verification code.
type code struct {
	code    string // 6 digits
	serial  string // random: names the code's attempt counter, never one of another code
	expires time.Time
}

// codeBook holds the pending verification codes of this process, one per
// destination, safe for concurrent use. A real service keeps codes in its
// own database, shared by its instances: here a code sent through one
// instance is unknown to the others. Each entry lives codeLifetime; the
// book holds at most the sends of a lifetime, which the send limits bound.
type codeBook struct {
	mu       sync.Mutex
	codes    map[string]code // by destination
	lifetime time.Duration
	now      func() time.Time
}

func newCodeBook(lifetime time.Duration) *codeBook {
	return &codeBook{codes: map[string]code{}, lifetime: lifetime, now: time.Now}
}

// issue makes a new code for dest, replacing its pending one (which dies
// with its attempts), and drops the codes that have expired.
func (b *codeBook) issue(dest string) code {
	c := code{code: sixDigits(), serial: hex.EncodeToString(randomBytes(8))}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	for d, old := range b.codes {
		if !now.Before(old.expires) {
			delete(b.codes, d)
		}
	}
	c.expires = now.Add(b.lifetime)
	b.codes[dest] = c
	return c
}

// pending returns dest's code when it has one that has not expired.
func (b *codeBook) pending(dest string) (code, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.codes[dest]
	if ok && !b.now().Before(c.expires) {
		delete(b.codes, dest)
		return code{}, false
	}
	return c, ok
}

// use removes dest's code of serial and reports whether it was still
// there, unexpired: of two checks with the right code, one wins.
func (b *codeBook) use(dest, serial string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.codes[dest]
	if !ok || c.serial != serial {
		return false
	}
	delete(b.codes, dest)
	return b.now().Before(c.expires)
}

// drop removes dest's code of serial, when it is still the pending one.
func (b *codeBook) drop(dest, serial string) { b.use(dest, serial) }

// sixDigits returns a uniformly random code of 6 decimal digits
// (crypto/rand).
func sixDigits() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return fmt.Sprintf("%06d", n.Int64())
}
