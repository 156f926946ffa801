package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, checkpoint.KeySize) }

func TestNewKeyringValidates(t *testing.T) {
	for _, c := range []struct {
		name    string
		current string
		keys    map[string][]byte
	}{
		{"no keys", "k1", nil},
		{"current not in the ring", "k3", map[string][]byte{"k1": key(1)}},
		{"short key", "k1", map[string][]byte{"k1": key(1)[:16]}},
		{"long key", "k1", map[string][]byte{"k1": append(key(1), 0)}},
		{"bad id", "k 1", map[string][]byte{"k 1": key(1)}},
		{"another key bad", "k1", map[string][]byte{"k1": key(1), "k2": nil}},
	} {
		_, err := checkpoint.NewKeyring(c.current, c.keys)
		if !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", c.name, err)
		}
	}
}

// TestKeyringHidesKeys: no key byte in its String, GoString, %v, %+v, or
// in the errors of a bad key.
func TestKeyringHidesKeys(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789ABCDEF")
	ring, err := checkpoint.NewKeyring("k1", map[string][]byte{"k1": secret})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{ring.String(), fmt.Sprintf("%v %+v %#v %s", ring, ring, ring, ring)} {
		if strings.Contains(s, string(secret)) || strings.Contains(s, fmt.Sprintf("%x", secret)) || strings.Contains(s, "0123") {
			t.Errorf("the keyring shows its key: %s", s)
		}
	}
	_, err = checkpoint.NewKeyring("k1", map[string][]byte{"k1": secret[:31]})
	if err == nil || strings.Contains(err.Error(), string(secret[:31])) || strings.Contains(err.Error(), "0123") {
		t.Errorf("error shows the key: %v", err)
	}
}

func TestKeyringAEAD(t *testing.T) {
	ctx := context.Background()
	ring, err := checkpoint.NewKeyring("k2", map[string][]byte{"k1": key(1), "k2": key(2)})
	if err != nil {
		t.Fatal(err)
	}
	if ring.CurrentKeyID() != "k2" {
		t.Errorf("current = %q", ring.CurrentKeyID())
	}
	a1, err := ring.AEAD(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := ring.AEAD(ctx, "k2")
	nonce := make([]byte, 12)
	if bytes.Equal(a1.Seal(nil, nonce, []byte("x"), nil), a2.Seal(nil, nonce, []byte("x"), nil)) {
		t.Error("k1 and k2 seal alike")
	}
	if _, err := ring.AEAD(ctx, "k3"); !errors.Is(err, checkpoint.ErrDecrypt) {
		t.Errorf("unknown key: %v, want ErrDecrypt", err)
	}
}

func TestKeyringFunc(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	down := errors.New("kms unreachable")
	var failing atomic.Bool
	fetch := func(_ context.Context, id string) ([]byte, error) {
		calls.Add(1)
		if failing.Load() {
			return nil, down
		}
		switch id {
		case "k1":
			return key(1), nil
		case "short":
			return key(1)[:8], nil
		}
		return nil, fmt.Errorf("no such key: %w", checkpoint.ErrDecrypt)
	}
	ring, err := checkpoint.NewKeyringFunc(ctx, "k1", fetch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ring.AEAD(ctx, "k1"); err != nil || calls.Load() != 1 {
		t.Errorf("AEAD(k1) = %v after %d calls, want 1 (cached)", err, calls.Load())
	}
	if _, err := ring.AEAD(ctx, "k9"); !errors.Is(err, checkpoint.ErrDecrypt) {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := ring.AEAD(ctx, "short"); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("short key: %v", err)
	}
	failing.Store(true)
	if _, err := ring.AEAD(ctx, "k2"); !errors.Is(err, down) || errors.Is(err, checkpoint.ErrDecrypt) {
		t.Errorf("unreachable: %v", err)
	}
	if _, err := ring.AEAD(ctx, "k1"); err != nil {
		t.Errorf("cached key while the service is down: %v", err)
	}
	if _, err := checkpoint.NewKeyringFunc(ctx, "k2", fetch); !errors.Is(err, down) {
		t.Errorf("NewKeyringFunc checks the current key: %v", err)
	}
	if _, err := checkpoint.NewKeyringFunc(ctx, "k1", nil); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("nil func: %v", err)
	}
}
