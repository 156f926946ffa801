package codec

import (
	"context"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/seal"
)

// Encryption at rest (docs/storage-format.md, "Encrypted values"): what
// the saver, the stream consumer and the store share. A stored value's
// plain form (pack(type, bytes), or its compressed "z" form) is sealed with
// the keyring's current key and the associated data of its place; every
// read opens it with the key its id names and the AAD of the place it was
// read from. The errors wrap checkpoint.ErrDecrypt and name no byte of the
// value.

// SealValue returns the encrypted form of stored, the plain stored form of
// a value, for the place aad names. The empty marker (a version without a
// value) stays as it is: it is no value.
func SealValue(ctx context.Context, ring *checkpoint.Keyring, aad []byte, stored string) (string, error) {
	if stored == "" {
		return "", nil
	}
	id := ring.CurrentKeyID()
	aead, err := ring.AEAD(ctx, id)
	if err != nil {
		return "", err
	}
	out, err := seal.Seal(aead, id, aad, stored)
	if err != nil {
		return "", fmt.Errorf("%w: %v", checkpoint.ErrSerialization, err)
	}
	return out, nil
}

// OpenValue returns the plain stored form of stored, read from the place
// whose AAD aad returns (called only for an encrypted value). With ring nil
// (encryption off) a plain value is returned as it is and an encrypted one
// refused. With a ring, an encrypted value is opened with the key its id
// names; a plain one is refused unless allowPlain (the migration option);
// the empty marker is returned as it is. What it refuses wraps
// checkpoint.ErrDecrypt; place names the place in the error (thread,
// channel...: never a byte of the value).
func OpenValue(ctx context.Context, ring *checkpoint.Keyring, allowPlain bool, stored string, aad func() []byte, place func() string) (string, error) {
	if !seal.IsSealed(stored) {
		if ring == nil || allowPlain || stored == "" {
			return stored, nil
		}
		return "", fmt.Errorf("%w: %s: a plaintext value where encryption is required", checkpoint.ErrDecrypt, place())
	}
	if ring == nil {
		return "", fmt.Errorf("%w: %s: an encrypted value and no keyring", checkpoint.ErrDecrypt, place())
	}
	env, err := seal.Parse(stored)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", checkpoint.ErrDecrypt, place(), err)
	}
	aead, err := ring.AEAD(ctx, env.KeyID)
	if err != nil {
		return "", fmt.Errorf("%s: %w", place(), err)
	}
	plain, err := seal.Open(aead, env, aad())
	if err != nil {
		return "", fmt.Errorf("%w: %s, key %q: %v", checkpoint.ErrDecrypt, place(), env.KeyID, err)
	}
	if plain == "" || !(plain[0] >= '1' && plain[0] <= '9' || plain[0] == CompressedTag) {
		return "", fmt.Errorf("%w: %s, key %q: the decrypted value is not a stored form", checkpoint.ErrDecrypt, place(), env.KeyID)
	}
	return plain, nil
}
