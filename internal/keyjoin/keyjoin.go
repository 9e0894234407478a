// Package keyjoin joins the parts of a subject key so that no choice of parts
// can collide with another.
package keyjoin

import (
	"errors"
	"strconv"
)

// ErrEmptyPart reports an empty part, or no part at all.
var ErrEmptyPart = errors.New("empty key part")

// Join writes each part as its length, ':' and the part ("a:b"+"c" differs
// from "a"+"b:c"). An empty part, or no part, is ErrEmptyPart.
func Join(parts ...string) (string, error) {
	var b []byte
	for _, part := range parts {
		if part == "" {
			return "", ErrEmptyPart
		}
		b = strconv.AppendInt(b, int64(len(part)), 10)
		b = append(b, ':')
		b = append(b, part...)
	}
	if len(b) == 0 {
		return "", ErrEmptyPart
	}
	return string(b), nil
}
