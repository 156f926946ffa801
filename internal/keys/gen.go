package keys

import (
	"crypto/rand"
	"fmt"
)

// MaxGenLen bounds a generation token.
const MaxGenLen = 16

// genAlphabet is the alphabet of generation tokens: lower-case base32
// (RFC 4648 letters, then digits 2-7), none of which Encode escapes.
const genAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// NewGen returns a fresh generation token: 13 characters of genAlphabet
// (65 random bits). A thread's data keys carry the generation of its head,
// so a deleted, expired or copied-over thread gets a new key space at once.
func NewGen() string {
	var b [13]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("keys: crypto/rand failed: " + err.Error()) // never on supported platforms
	}
	for i := range b {
		b[i] = genAlphabet[b[i]&31]
	}
	return string(b[:])
}

// ValidateGen accepts generation tokens of 1 to MaxGenLen characters of
// genAlphabet.
func ValidateGen(g string) error {
	if g == "" || len(g) > MaxGenLen {
		return fmt.Errorf("%w: generation of %d bytes (1 to %d)", ErrInvalid, len(g), MaxGenLen)
	}
	for i := 0; i < len(g); i++ {
		c := g[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return fmt.Errorf("%w: generation %q holds %q", ErrInvalid, g, c)
		}
	}
	return nil
}
