package checkpoint

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/graphstate/redcheck/internal/seal"
)

// KeySize is the size of a Keyring key: AES-256.
const KeySize = 32

// KeyFunc returns the key a key id names: 32 bytes. It lets a key
// management service serve the keys of a Keyring (NewKeyringFunc). It
// answers a key id it does not know with an error that wraps ErrDecrypt;
// any other error (the service unreachable, say) is passed on to the caller
// of the read or write, wrapped, and the key is asked for again next time.
type KeyFunc func(ctx context.Context, keyID string) ([]byte, error)

// A Keyring holds the keys of encryption at rest (docs/operations.md,
// "Encryption at rest"): keys named by key ids, one of them current. Savers
// seal every value they write with the current key, and store its id with
// the ciphertext; they open a value with whichever key of the ring its id
// names, so a ring that keeps the old key while a new one is current reads
// both (rotation).
//
// A Keyring never shows its keys: not in its String or GoString, not in an
// error. It is safe for concurrent use; build it once and share it.
type Keyring struct {
	current string
	fetch   KeyFunc  // nil for a fixed ring
	keys    sync.Map // key id -> cipher.AEAD, the keys known so far
}

// NewKeyring returns the keyring of keys (key id -> 32-byte key), with
// current the id of the key new values are sealed with. A key id is 1 to 64
// bytes of printable ASCII without space (it is stored in the clear with
// every value); every key must be 32 bytes. It copies nothing it keeps of
// keys: the map may be cleared afterwards.
func NewKeyring(current string, keys map[string][]byte) (*Keyring, error) {
	if _, ok := keys[current]; !ok {
		return nil, keyringErr("the current key id %q names no key of the ring", current)
	}
	k := &Keyring{current: current}
	ids := make([]string, 0, len(keys))
	for id := range keys {
		ids = append(ids, id)
	}
	sort.Strings(ids) // the first invalid key is the same every time
	for _, id := range ids {
		aead, err := newAEAD(id, keys[id])
		if err != nil {
			return nil, err
		}
		k.keys.Store(id, aead)
	}
	return k, nil
}

// NewKeyringFunc returns a keyring whose keys fetch serves, with current the
// id of the key new values are sealed with. It fetches the current key
// once, to check it, and keeps every key fetch returns (for the life of the
// keyring): fetch is called once per key id, and again only for an id it
// failed to serve.
func NewKeyringFunc(ctx context.Context, current string, fetch KeyFunc) (*Keyring, error) {
	if fetch == nil {
		return nil, keyringErr("no key function")
	}
	if !seal.ValidKeyID(current) {
		return nil, keyringErr("key id %q: want 1 to %d bytes of printable ASCII without space", current, seal.MaxKeyIDLen)
	}
	k := &Keyring{current: current, fetch: fetch}
	if _, err := k.AEAD(ctx, current); err != nil {
		return nil, err
	}
	return k, nil
}

// CurrentKeyID returns the id of the key new values are sealed with.
func (k *Keyring) CurrentKeyID() string { return k.current }

// AEAD returns the AES-256-GCM of the key keyID names. A key id the ring
// does not hold (or that its KeyFunc refuses with ErrDecrypt) is an error
// wrapping ErrDecrypt: a value sealed with it cannot be opened.
func (k *Keyring) AEAD(ctx context.Context, keyID string) (cipher.AEAD, error) {
	if a, ok := k.keys.Load(keyID); ok {
		return a.(cipher.AEAD), nil
	}
	if k.fetch == nil || !seal.ValidKeyID(keyID) {
		return nil, fmt.Errorf("%w: no key %q in the keyring", ErrDecrypt, keyID)
	}
	key, err := k.fetch(ctx, keyID)
	if err != nil {
		if errors.Is(err, ErrDecrypt) {
			return nil, fmt.Errorf("%w: the key function knows no key %q", ErrDecrypt, keyID)
		}
		return nil, fmt.Errorf("checkpoint: keyring: fetching key %q: %w", keyID, err)
	}
	aead, err := newAEAD(keyID, key)
	if err != nil {
		return nil, err
	}
	a, _ := k.keys.LoadOrStore(keyID, aead)
	return a.(cipher.AEAD), nil
}

// String names the current key id only.
func (k *Keyring) String() string { return fmt.Sprintf("checkpoint.Keyring{current: %q}", k.current) }

// GoString is String: %#v shows no key either.
func (k *Keyring) GoString() string { return k.String() }

func newAEAD(id string, key []byte) (cipher.AEAD, error) {
	if !seal.ValidKeyID(id) {
		return nil, keyringErr("key id %q: want 1 to %d bytes of printable ASCII without space", id, seal.MaxKeyIDLen)
	}
	if len(key) != KeySize {
		return nil, keyringErr("key %q is %d bytes, want %d", id, len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, keyringErr("key %q: %v", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, keyringErr("key %q: %v", id, err)
	}
	return aead, nil
}

func keyringErr(format string, args ...any) error {
	return fmt.Errorf("checkpoint: keyring: %w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}
