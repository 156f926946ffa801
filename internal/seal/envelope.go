package seal

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// The encrypted form of a stored value:
//
//	"e" version len(keyID) keyID nonce ciphertext
//
// "e" is the byte 0x65; version is one byte, 0x01; len(keyID) is one byte
// (1 to MaxKeyIDLen) and keyID that many bytes of printable ASCII
// (0x21-0x7e); nonce is NonceSize bytes; ciphertext is the AES-256-GCM
// encryption of the plain stored form followed by its TagSize-byte tag.
const (
	// Tag is the first byte of an encrypted stored value.
	Tag = 'e'
	// Version is the only version of the envelope.
	Version = 1
	// MaxKeyIDLen bounds a key id, in bytes.
	MaxKeyIDLen = 64
	// KeySize is the size of an AES-256 key.
	KeySize = 32
	// NonceSize is the size of a GCM nonce.
	NonceSize = 12
	// TagSize is the size of a GCM tag.
	TagSize = 16
	// headerFixed is the tag, version and key id length bytes.
	headerFixed = 3
	// MinLen is the length of the shortest envelope: a 1-byte key id and
	// an empty plaintext (which no writer seals: a stored form is never
	// empty).
	MinLen = headerFixed + 1 + NonceSize + TagSize
)

// Errors of Parse and Open. They name no byte of the value.
var (
	errNotSealed  = errors.New("not an encrypted value")
	errVersion    = errors.New("encrypted value of an unknown envelope version")
	errKeyID      = errors.New("encrypted value with a malformed key id")
	errTruncated  = errors.New("encrypted value cut short")
	errAuth       = errors.New("encrypted value fails authentication (altered, or not of this place)")
	errNonceSize  = errors.New("seal: the AEAD's nonce size is not 12 bytes")
	errPlainEmpty = errors.New("seal: nothing to seal")
)

// IsSealed reports whether stored is in the encrypted form (its first
// byte is Tag). It says nothing of its validity.
func IsSealed(stored string) bool {
	return stored != "" && stored[0] == Tag
}

// ValidKeyID reports whether id can be a key id: 1 to MaxKeyIDLen bytes of
// printable ASCII without space.
func ValidKeyID(id string) bool {
	if len(id) == 0 || len(id) > MaxKeyIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// Envelope is a parsed encrypted value. Its strings share the stored
// value's bytes.
type Envelope struct {
	KeyID      string
	Nonce      string // NonceSize bytes
	Ciphertext string // ciphertext and tag, at least TagSize bytes
}

// Parse splits an encrypted value into its parts. It checks the layout
// only (tag, version, key id, lengths), not the authentication tag: that is
// Open's work. It is pure and allocates nothing.
func Parse(stored string) (Envelope, error) {
	if !IsSealed(stored) {
		return Envelope{}, errNotSealed
	}
	if len(stored) < headerFixed {
		return Envelope{}, errTruncated
	}
	if stored[1] != Version {
		return Envelope{}, errVersion
	}
	n := int(stored[2])
	if n == 0 || n > MaxKeyIDLen {
		return Envelope{}, errKeyID
	}
	if len(stored) < headerFixed+n+NonceSize+TagSize {
		return Envelope{}, errTruncated
	}
	id := stored[headerFixed : headerFixed+n]
	if !ValidKeyID(id) {
		return Envelope{}, errKeyID
	}
	rest := stored[headerFixed+n:]
	return Envelope{KeyID: id, Nonce: rest[:NonceSize], Ciphertext: rest[NonceSize:]}, nil
}

// Seal encrypts plain (a non-empty plain stored form) under aead, an
// AES-256-GCM of the key keyID names, with a fresh random nonce and aad.
func Seal(aead cipher.AEAD, keyID string, aad []byte, plain string) (string, error) {
	var nonce [NonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("seal: random nonce: %w", err)
	}
	return SealNonce(aead, keyID, nonce[:], aad, plain)
}

// SealNonce is Seal with the nonce given: for the test vectors only. A
// nonce must never be used twice with one key.
func SealNonce(aead cipher.AEAD, keyID string, nonce, aad []byte, plain string) (string, error) {
	if !ValidKeyID(keyID) {
		return "", errKeyID
	}
	if aead.NonceSize() != NonceSize || len(nonce) != NonceSize || aead.Overhead() != TagSize {
		return "", errNonceSize
	}
	if plain == "" {
		return "", errPlainEmpty
	}
	hdr := headerFixed + len(keyID) + NonceSize
	out := make([]byte, hdr, hdr+len(plain)+TagSize)
	out[0], out[1], out[2] = Tag, Version, byte(len(keyID))
	copy(out[headerFixed:], keyID)
	copy(out[headerFixed+len(keyID):], nonce)
	body := append(out[hdr:], plain...)   // within the capacity: no copy but this one
	aead.Seal(body[:0], nonce, body, aad) // in place
	return string(out[:hdr+len(plain)+TagSize]), nil
}

// Open authenticates and decrypts a parsed envelope with aead (the key its
// KeyID names) and aad, the associated data of the place it was read from.
func Open(aead cipher.AEAD, env Envelope, aad []byte) (string, error) {
	if aead.NonceSize() != NonceSize || aead.Overhead() != TagSize {
		return "", errNonceSize
	}
	ct := []byte(env.Ciphertext)
	plain, err := aead.Open(ct[:0], []byte(env.Nonce), ct, aad) // in place
	if err != nil {
		return "", errAuth // crypto/cipher's error says nothing more
	}
	return string(plain), nil
}
