package checkpoint_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
)

// A keyring for encryption at rest: k2 is current (new values are sealed
// with it), k1 stays in the ring so that values sealed before the rotation
// still read. Pass it in the saver's Options.Encryption.
func ExampleNewKeyring() {
	k1, k2 := make([]byte, checkpoint.KeySize), make([]byte, checkpoint.KeySize)
	_, _ = rand.Read(k1) // in production: from a secret store, never from code
	_, _ = rand.Read(k2)
	ring, err := checkpoint.NewKeyring("k2", map[string][]byte{"k1": k1, "k2": k2})
	if err != nil {
		panic(err)
	}
	fmt.Println(ring.CurrentKeyID())
	fmt.Println(ring) // never shows a key

	_, err = checkpoint.NewKeyring("k1", map[string][]byte{"k1": k1[:16]})
	fmt.Println(errors.Is(err, checkpoint.ErrInvalidConfig))
	// Output:
	// k2
	// checkpoint.Keyring{current: "k2"}
	// true
}

// A keyring whose keys a key management service serves: each key is
// fetched once, when first needed, and kept.
func ExampleNewKeyringFunc() {
	kms := map[string][]byte{"projects/p/keys/state:v1": make([]byte, checkpoint.KeySize)}
	fetch := func(ctx context.Context, keyID string) ([]byte, error) {
		key, ok := kms[keyID] // a call to the service, in production
		if !ok {
			return nil, fmt.Errorf("no key %q: %w", keyID, checkpoint.ErrDecrypt)
		}
		return key, nil
	}
	ring, err := checkpoint.NewKeyringFunc(context.Background(), "projects/p/keys/state:v1", fetch)
	if err != nil {
		panic(err)
	}
	_, err = ring.AEAD(context.Background(), "projects/p/keys/state:v0")
	fmt.Println(ring.CurrentKeyID(), errors.Is(err, checkpoint.ErrDecrypt))
	// Output:
	// projects/p/keys/state:v1 true
}
