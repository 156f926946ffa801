package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/seal"
)

// Encryption at rest (Options.Encryption; docs/storage-format.md,
// "Encrypted values"): an item's value is stored as the encrypted form of
// pack("json", canonical JSON), bound by its AAD to the store prefix, the
// item's namespace labels and its key. Without a keyring the value is
// stored as canonical JSON, as before. Vectors, namespaces, keys and
// timestamps stay in the clear (docs/operations.md, "Encryption at rest").

// itemType is the type tag of an item's value in its packed plain form.
const itemType = "json"

// sealItem returns the stored form of an item's value (canonical JSON):
// itself without a keyring, else encrypted for (ns, key).
func (s *Store) sealItem(ctx context.Context, ns []string, key string, value []byte) ([]byte, error) {
	ring := s.opts.Encryption
	if ring == nil {
		return value, nil
	}
	out, err := codec.SealValue(ctx, ring, seal.ItemAAD(s.opts.Prefix, ns, key), codec.PackValue(itemType, value))
	if err != nil {
		return nil, fmt.Errorf("redisstore: item %q/%q: %w", ns, key, err)
	}
	return []byte(out), nil
}

// openItem returns the canonical JSON of an item's stored value, read at
// (ns, key). A plain value (canonical JSON) is refused with ErrDecrypt when
// the store encrypts, unless Options.ReadPlaintext; an encrypted one is
// refused with ErrDecrypt when the store has no keyring, or when it fails to
// open (another key, another place, altered).
func (s *Store) openItem(ctx context.Context, ns []string, key string, stored string) (string, error) {
	ring := s.opts.Encryption
	if !seal.IsSealed(stored) && (ring == nil || s.opts.ReadPlaintext) {
		return stored, nil
	}
	plain, err := codec.OpenValue(ctx, ring, s.opts.ReadPlaintext, stored,
		func() []byte { return seal.ItemAAD(s.opts.Prefix, ns, key) },
		func() string { return fmt.Sprintf("store item: namespace %q, key %q", ns, key) })
	if errors.Is(err, checkpoint.ErrDecrypt) {
		return "", fmt.Errorf("%w: %w", ErrDecrypt, err)
	}
	if err != nil {
		return "", fmt.Errorf("redisstore: %w", err) // the key function failed
	}
	typ, data, err := codec.UnpackValue(plain)
	if err != nil || typ != itemType {
		return "", errorf(ErrCorrupt, "item %q/%q: the decrypted value is not of type %q", ns, key, itemType)
	}
	return data, nil
}

// scannedValue returns the canonical JSON of the value of an item a walk
// met (store_scan.lua's "v" mode), opened at its place when the store
// encrypts or the value is encrypted. An entry without a value (not one the
// store wrote) gives "", which no filter matches.
func (s *Store) scannedValue(ctx context.Context, e scanEntry) (string, error) {
	if e.value == "" || (s.opts.Encryption == nil && !seal.IsSealed(e.value)) {
		return e.value, nil
	}
	ns, key, err := splitID(e.id)
	if err != nil {
		return "", err
	}
	return s.openItem(ctx, ns, key, e.value)
}
