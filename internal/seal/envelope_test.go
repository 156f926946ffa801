package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"strings"
	"testing"
)

func gcm(t testing.TB, b byte) cipher.AEAD {
	t.Helper()
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = b + byte(i)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSealOpen(t *testing.T) {
	a := gcm(t, 1)
	aad := ChannelAAD("p", "t", "", "c", "1")
	for _, plain := range []string{"1:x", "7:msgpack\x00\xff", "z5:" + strings.Repeat("a", 1000)} {
		s1, err := Seal(a, "k1", aad, plain)
		if err != nil {
			t.Fatal(err)
		}
		s2, _ := Seal(a, "k1", aad, plain)
		if s1 == s2 {
			t.Error("two seals of one value are equal: the nonce is not fresh")
		}
		if strings.Contains(s1, plain) {
			t.Error("the plaintext shows in the sealed form")
		}
		env, err := Parse(s1)
		if err != nil || env.KeyID != "k1" || len(env.Nonce) != NonceSize || len(env.Ciphertext) != len(plain)+TagSize {
			t.Fatalf("Parse = %+v, %v", env, err)
		}
		got, err := Open(a, env, aad)
		if err != nil || got != plain {
			t.Errorf("Open = %q, %v", got, err)
		}
		if _, err := Open(gcm(t, 2), env, aad); err == nil {
			t.Error("another key opens it")
		}
		if _, err := Open(a, env, ChannelAAD("p", "t", "", "c", "2")); err == nil {
			t.Error("another place opens it")
		}
	}
}

func TestSealRefuses(t *testing.T) {
	a := gcm(t, 1)
	nonce := make([]byte, NonceSize)
	for _, c := range []struct {
		name, id, plain string
		nonce           []byte
	}{
		{"empty key id", "", "1:x", nonce},
		{"key id with a space", "k 1", "1:x", nonce},
		{"key id too long", strings.Repeat("k", MaxKeyIDLen+1), "1:x", nonce},
		{"short nonce", "k", "1:x", nonce[:8]},
		{"empty plaintext", "k", "", nonce},
	} {
		if _, err := SealNonce(a, c.id, c.nonce, nil, c.plain); err == nil {
			t.Errorf("%s: sealed", c.name)
		}
	}
}

// TestAADInjective: places that differ in any part, or only in where one
// part ends and the next begins, have different AADs.
func TestAADInjective(t *testing.T) {
	seen := map[string]string{}
	add := func(name string, b []byte) {
		if prev, ok := seen[string(b)]; ok {
			t.Errorf("%s and %s have one AAD %q", prev, name, b)
		}
		seen[string(b)] = name
	}
	add("c1", ChannelAAD("p", "t", "", "c", "1"))
	add("c2", ChannelAAD("p", "t", "", "c1", ""))
	add("c3", ChannelAAD("p", "t:", "", "c", "1"))
	add("c4", ChannelAAD("p", "", "t", "c", "1"))
	add("c5", ChannelAAD("p2", "t", "", "c", "1"))
	add("w1", WriteAAD("p", "t", "", "id", "task", 0, "c"))
	add("w2", WriteAAD("p", "t", "", "id", "task", -1, "c"))
	add("w3", WriteAAD("p", "t", "", "id", "task0", 0, "c"))
	add("i1", ItemAAD("p", []string{"a", "b"}, "k"))
	add("i2", ItemAAD("p", []string{"a"}, "bk"))
	add("i3", ItemAAD("p", []string{"a", "b", "k"}, ""))
	add("i4", ItemAAD("p", nil, "k"))
	add("i5", ItemAAD("p", []string{""}, "k"))
}

// FuzzParse: no input makes Parse panic, and what it accepts has the
// layout's lengths and a valid key id, and is the input cut in three.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "e", "e\x01", "e\x01\x02k1" + strings.Repeat("\x00", 28), "1:x", "z3:abc", "e\x02\x01k"} {
		f.Add(s)
	}
	a := gcm(f, 3)
	s, _ := Seal(a, "key", []byte("aad"), "7:msgpack\xc0")
	f.Add(s)
	f.Fuzz(func(t *testing.T, s string) {
		env, err := Parse(s)
		if err != nil {
			return
		}
		if !ValidKeyID(env.KeyID) || len(env.Nonce) != NonceSize || len(env.Ciphertext) < TagSize {
			t.Fatalf("Parse(%q) = %+v", s, env)
		}
		if got := "e\x01" + string(rune(len(env.KeyID))) + env.KeyID + env.Nonce + env.Ciphertext; got != s {
			t.Fatalf("Parse(%q) does not cut its input: %q", s, got)
		}
		_, _ = Open(a, env, nil) // must not panic
	})
}

// TestAADExample: the example of docs/storage-format.md.
func TestAADExample(t *testing.T) {
	if got, want := string(ChannelAAD("redcheck", "t", "", "messages", "1")), "14:redcheck/enc/17:channel8:redcheck1:t0:8:messages1:1"; got != want {
		t.Errorf("ChannelAAD = %q, want %q", got, want)
	}
}
