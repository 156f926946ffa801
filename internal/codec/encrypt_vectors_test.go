package codec

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/formatvec"
	"github.com/graphstate/redcheck/internal/seal"
)

// The encryption vectors (testdata/format/encryption.json, described in
// docs/storage-format.md, "Encrypted values"): for fixed keys and nonces,
// the associated data of each place and the exact stored bytes of a value
// sealed there; and stored values every reader must refuse.
// TestFormatVectorsEncryption builds them from seal and compares them with
// the file byte for byte (REDCHECK_UPDATE_VECTORS=1 rewrites it), then
// checks that OpenValue reads every valid one back and refuses every
// invalid one with checkpoint.ErrDecrypt.

type encDoc struct {
	Comment string       `json:"comment"`
	Keys    []encKey     `json:"keys"`
	Valid   []encVec     `json:"valid"`
	Invalid []encInvalid `json:"invalid"`
}

type encKey struct {
	KeyID  string `json:"key_id"`
	KeyHex string `json:"key_hex"`
}

// encPlace is the input of an AAD: Kind and the fields that kind uses.
type encPlace struct {
	Kind         string          `json:"kind"`
	Prefix       formatvec.Bin   `json:"prefix"`
	ThreadID     *formatvec.Bin  `json:"thread_id,omitempty"`
	CheckpointNS *formatvec.Bin  `json:"checkpoint_ns,omitempty"`
	Channel      *formatvec.Bin  `json:"channel,omitempty"`
	Version      *formatvec.Bin  `json:"version,omitempty"`
	CheckpointID *formatvec.Bin  `json:"checkpoint_id,omitempty"`
	TaskID       *formatvec.Bin  `json:"task_id,omitempty"`
	Index        *int            `json:"index,omitempty"`
	Namespace    []formatvec.Bin `json:"namespace,omitempty"`
	Key          *formatvec.Bin  `json:"key,omitempty"`
}

type encVec struct {
	Name     string        `json:"name"`
	KeyID    string        `json:"key_id"`
	NonceHex string        `json:"nonce_hex"`
	Place    encPlace      `json:"place"`
	AAD      formatvec.Bin `json:"aad"`
	Plain    formatvec.Bin `json:"plain"`
	Stored   string        `json:"stored_hex"`
}

type encInvalid struct {
	Name string `json:"name"`
	// Ring is the key ids of the keys (of Keys) the reader holds.
	Ring   []string      `json:"ring"`
	Place  encPlace      `json:"place"`
	AAD    formatvec.Bin `json:"aad"`
	Stored string        `json:"stored_hex"`
}

var (
	encKeys = []encKey{
		{"k1", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"},
		{"k2", "c0ffee00c0ffee01c0ffee02c0ffee03c0ffee04c0ffee05c0ffee06c0ffee07"},
		{"kms/projects/p/keys/agent-state:v3", "8f14e45fceea167a5a36dedd4bea2543a1b2c3d4e5f60718293a4b5c6d7e8f90"},
	}
)

func bp(s string) *formatvec.Bin { b := formatvec.B(s); return &b }
func ip(i int) *int              { return &i }

func channelPlace(prefix, thread, ns, ch, ver string) encPlace {
	return encPlace{Kind: seal.KindChannel, Prefix: formatvec.B(prefix), ThreadID: bp(thread), CheckpointNS: bp(ns), Channel: bp(ch), Version: bp(ver)}
}

func writePlace(prefix, thread, ns, id, task string, idx int, ch string) encPlace {
	return encPlace{Kind: seal.KindWrite, Prefix: formatvec.B(prefix), ThreadID: bp(thread), CheckpointNS: bp(ns), CheckpointID: bp(id), TaskID: bp(task), Index: ip(idx), Channel: bp(ch)}
}

func itemPlace(prefix string, ns []string, key string) encPlace {
	return encPlace{Kind: seal.KindItem, Prefix: formatvec.B(prefix), Namespace: formatvec.Bins(ns), Key: bp(key)}
}

// aad builds the AAD of p with seal's builders.
func (p encPlace) aad(t testing.TB) []byte {
	t.Helper()
	s := func(b *formatvec.Bin) string { return formatvec.Unhex(t, b.Hex) }
	prefix := formatvec.Unhex(t, p.Prefix.Hex)
	switch p.Kind {
	case seal.KindChannel:
		return seal.ChannelAAD(prefix, s(p.ThreadID), s(p.CheckpointNS), s(p.Channel), s(p.Version))
	case seal.KindWrite:
		return seal.WriteAAD(prefix, s(p.ThreadID), s(p.CheckpointNS), s(p.CheckpointID), s(p.TaskID), *p.Index, s(p.Channel))
	case seal.KindItem:
		ns := make([]string, len(p.Namespace))
		for i, l := range p.Namespace {
			ns[i] = formatvec.Unhex(t, l.Hex)
		}
		return seal.ItemAAD(prefix, ns, s(p.Key))
	}
	t.Fatalf("unknown kind %q", p.Kind)
	return nil
}

func testAEAD(t testing.TB, id string) cipher.AEAD {
	t.Helper()
	for _, k := range encKeys {
		if k.KeyID == id {
			key, _ := hex.DecodeString(k.KeyHex)
			block, err := aes.NewCipher(key)
			if err != nil {
				t.Fatal(err)
			}
			aead, err := cipher.NewGCM(block)
			if err != nil {
				t.Fatal(err)
			}
			return aead
		}
	}
	t.Fatalf("no key %q", id)
	return nil
}

func testRing(t testing.TB, ids ...string) *checkpoint.Keyring {
	t.Helper()
	keys := map[string][]byte{}
	for _, k := range encKeys {
		for _, id := range ids {
			if k.KeyID == id {
				keys[id], _ = hex.DecodeString(k.KeyHex)
			}
		}
	}
	ring, err := checkpoint.NewKeyring(ids[0], keys)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func nonce(i byte) string {
	b := make([]byte, seal.NonceSize)
	for j := range b {
		b[j] = i*16 + byte(j)
	}
	return string(b)
}

func buildEncDoc(t testing.TB) encDoc {
	doc := encDoc{
		Comment: "Encrypted stored values (docs/storage-format.md, Encrypted values): " +
			"stored = 'e' 0x01 len(key_id) key_id nonce AES-256-GCM(key, nonce, plain, aad) (ciphertext then 16-byte tag). " +
			"aad = len:part for each part (every part length-prefixed): 'redcheck/enc/1', kind, then the place's parts " +
			"(channel: prefix, thread_id, checkpoint_ns, channel, version; write: prefix, thread_id, checkpoint_ns, checkpoint_id, task_id, index, channel; " +
			"item: prefix, number of namespace labels, each label, key). valid: key (of keys), nonce, place, aad and plain give stored_hex exactly. " +
			"invalid: a reader holding the keys of ring (the first current), reading stored_hex at place (aad), with plaintext refused, must refuse it.",
		Keys: encKeys,
	}
	msg := PackValue("msgpack", []byte("\x81\xa4role\xa4user"))
	long := PackValue("json", []byte(`{"messages":"`+strings.Repeat("hello, world. ", 200)+`"}`))
	z := Compress(long, 6, 1024)
	if !IsCompressed(z) {
		t.Fatal("the long value does not compress")
	}
	binary := PackValue("bytes", []byte{0, 1, 2, 0xff, 0xfe, 0x80, 'e', 'z', 0})
	cases := []struct {
		name, id string
		place    encPlace
		plain    string
	}{
		{"channel value", "k1", channelPlace("redcheck", "thread-1", "", "messages", "00000000000000000000000000000002.0.243798"), msg},
		{"channel value in a subgraph, unicode thread", "k1", channelPlace("app:prod", "スレッド-7", "child:1|inner:2", "a:b", "2:c"), msg},
		{"compressed stored form", "k2", channelPlace("redcheck", "thread-1", "", "messages", "00000000000000000000000000000003.0.5"), z},
		{"pending write", "k1", writePlace("redcheck", "thread-1", "", "1ef4f797-8335-6428-8001-8a1503f9b875", "6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab", 0, "messages"), msg},
		{"pending write to a special channel", "k2", writePlace("redcheck", "thread-1", "", "1ef4f797-8335-6428-8001-8a1503f9b875", "task", checkpoint.WriteIndex(checkpoint.ErrorChannel, 0), checkpoint.ErrorChannel), PackValue("json", []byte(`"boom"`))},
		{"memory store item", "k1", itemPlace("store", []string{"users", "u1", "memories"}, "pref"), PackValue("json", []byte(`{"food":"pizza"}`))},
		{"memory store item, root namespace", "k1", itemPlace("store", nil, "k"), PackValue("json", []byte(`{}`))},
		{"empty bytes", "kms/projects/p/keys/agent-state:v3", channelPlace("redcheck", "t", "", "c", "1"), PackValue("bytes", nil)},
		{"binary plaintext", "k1", channelPlace("redcheck", "t\x00nul", "ns", "bin\x00ch", "7"), binary},
	}
	for i, c := range cases {
		aad := c.place.aad(t)
		n := nonce(byte(i))
		stored, err := seal.SealNonce(testAEAD(t, c.id), c.id, []byte(n), aad, c.plain)
		if err != nil {
			t.Fatal(err)
		}
		doc.Valid = append(doc.Valid, encVec{Name: c.name, KeyID: c.id, NonceHex: formatvec.Hex(n), Place: c.place, AAD: formatvec.B(string(aad)), Plain: formatvec.B(c.plain), Stored: formatvec.Hex(stored)})
	}
	base := cases[0]
	baseStored := formatvec.Unhex(t, doc.Valid[0].Stored)
	flip := func(s string, i int) string { b := []byte(s); b[i] ^= 0x01; return string(b) }
	baseW := cases[3]
	baseWStored := formatvec.Unhex(t, doc.Valid[3].Stored)
	notStored, err := seal.SealNonce(testAEAD(t, "k1"), "k1", []byte(nonce(15)), base.place.aad(t), "hello")
	if err != nil {
		t.Fatal(err)
	}
	k2as1 := "e\x01\x02k2" + baseStored[5:]
	inv := []struct {
		name   string
		ring   []string
		place  encPlace
		stored string
	}{
		{"flipped bit in the ciphertext", []string{"k1", "k2"}, base.place, flip(baseStored, 20)},
		{"flipped bit in the tag", []string{"k1", "k2"}, base.place, flip(baseStored, len(baseStored)-1)},
		{"flipped bit in the nonce", []string{"k1", "k2"}, base.place, flip(baseStored, 6)},
		{"key id changed to another key of the ring", []string{"k1", "k2"}, base.place, k2as1},
		{"another thread", []string{"k1"}, channelPlace("redcheck", "thread-2", "", "messages", "00000000000000000000000000000002.0.243798"), baseStored},
		{"another prefix", []string{"k1"}, channelPlace("redcheck2", "thread-1", "", "messages", "00000000000000000000000000000002.0.243798"), baseStored},
		{"another namespace", []string{"k1"}, channelPlace("redcheck", "thread-1", "child:1", "messages", "00000000000000000000000000000002.0.243798"), baseStored},
		{"another channel", []string{"k1"}, channelPlace("redcheck", "thread-1", "", "other", "00000000000000000000000000000002.0.243798"), baseStored},
		{"another version", []string{"k1"}, channelPlace("redcheck", "thread-1", "", "messages", "00000000000000000000000000000003.0.243798"), baseStored},
		{"a channel value read as a pending write", []string{"k1"}, baseW.place, baseStored},
		{"another write index", []string{"k1"}, writePlace("redcheck", "thread-1", "", "1ef4f797-8335-6428-8001-8a1503f9b875", "6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab", 1, "messages"), baseWStored},
		{"another task", []string{"k1"}, writePlace("redcheck", "thread-1", "", "1ef4f797-8335-6428-8001-8a1503f9b875", "other-task", 0, "messages"), baseWStored},
		{"another checkpoint", []string{"k1"}, writePlace("redcheck", "thread-1", "", "1ef4f797-8335-6428-8001-8a1503f9b876", "6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab", 0, "messages"), baseWStored},
		{"unknown key id", []string{"k2"}, base.place, baseStored},
		{"truncated: one byte of the tag missing", []string{"k1"}, base.place, baseStored[:len(baseStored)-1]},
		{"truncated: shorter than an envelope", []string{"k1"}, base.place, baseStored[:seal.MinLen-1]},
		{"truncated: the tag byte alone", []string{"k1"}, base.place, "e"},
		{"unknown envelope version", []string{"k1"}, base.place, "e\x02" + baseStored[2:]},
		{"key id of length 0", []string{"k1"}, base.place, "e\x01\x00" + baseStored[3:]},
		{"key id with a control byte", []string{"k1"}, base.place, "e\x01\x02k\x01" + baseStored[5:]},
		{"decrypts to something that is not a stored form", []string{"k1"}, base.place, notStored},
		{"plaintext when plaintext is refused", []string{"k1"}, base.place, base.plain},
		{"compressed plaintext when plaintext is refused", []string{"k1"}, base.place, z},
	}
	for _, c := range inv {
		doc.Invalid = append(doc.Invalid, encInvalid{Name: c.name, Ring: c.ring, Place: c.place, AAD: formatvec.B(string(c.place.aad(t))), Stored: formatvec.Hex(c.stored)})
	}
	return doc
}

func TestFormatVectorsEncryption(t *testing.T) {
	formatvec.Check(t, "encryption.json", buildEncDoc(t))
	var doc encDoc
	formatvec.Load(t, "encryption.json", &doc)
	if len(doc.Valid) == 0 || len(doc.Invalid) == 0 {
		t.Fatal("encryption.json has no vectors")
	}
	ctx := context.Background()
	ring := testRing(t, "k1", "k2", "kms/projects/p/keys/agent-state:v3")
	for _, v := range doc.Valid {
		aad := v.Place.aad(t)
		if got := formatvec.Unhex(t, v.AAD.Hex); got != string(aad) {
			t.Errorf("%s: aad %x, builder %x", v.Name, got, aad)
		}
		stored := formatvec.Unhex(t, v.Stored)
		sealed, err := seal.SealNonce(testAEAD(t, v.KeyID), v.KeyID, []byte(formatvec.Unhex(t, v.NonceHex)), aad, formatvec.Unhex(t, v.Plain.Hex))
		if err != nil || sealed != stored {
			t.Errorf("%s: sealed %x, %v; want %s", v.Name, sealed, err, v.Stored)
		}
		got, err := OpenValue(ctx, ring, false, stored, func() []byte { return aad }, func() string { return v.Name })
		if err != nil || got != formatvec.Unhex(t, v.Plain.Hex) {
			t.Errorf("%s: OpenValue = %x, %v", v.Name, got, err)
		}
		if _, _, err := UnpackValue(got); err != nil {
			t.Errorf("%s: the plain form does not unpack: %v", v.Name, err)
		}
	}
	for _, v := range doc.Invalid {
		aad := v.Place.aad(t)
		if got := formatvec.Unhex(t, v.AAD.Hex); got != string(aad) {
			t.Errorf("%s: aad %x, builder %x", v.Name, got, aad)
		}
		r := testRing(t, v.Ring...)
		stored := formatvec.Unhex(t, v.Stored)
		got, err := OpenValue(ctx, r, false, stored, func() []byte { return aad }, func() string { return "place" })
		if !errors.Is(err, checkpoint.ErrDecrypt) {
			t.Errorf("%s: OpenValue = %x, %v; want ErrDecrypt", v.Name, got, err)
		}
	}
}

// TestOpenValuePolicy: which plain and encrypted values a reader takes,
// with and without a keyring and the migration option.
func TestOpenValuePolicy(t *testing.T) {
	ctx := context.Background()
	ring := testRing(t, "k1")
	aad := seal.ChannelAAD("p", "t", "", "c", "1")
	sealed, err := SealValue(ctx, ring, aad, "1:x")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := SealValue(ctx, ring, aad, ""); e != "" {
		t.Errorf("the empty marker sealed: %x", e)
	}
	for _, c := range []struct {
		name       string
		ring       *checkpoint.Keyring
		allowPlain bool
		stored     string
		want       string
		refused    bool
	}{
		{"off: plain", nil, false, "1:x", "1:x", false},
		{"off: encrypted", nil, false, sealed, "", true},
		{"on: encrypted", ring, false, sealed, "1:x", false},
		{"on: plain refused", ring, false, "1:x", "", true},
		{"on: marker", ring, false, "", "", false},
		{"migration: plain", ring, true, "1:x", "1:x", false},
		{"migration: encrypted", ring, true, sealed, "1:x", false},
	} {
		got, err := OpenValue(ctx, c.ring, c.allowPlain, c.stored, func() []byte { return aad }, func() string { return "thread t" })
		if c.refused != errors.Is(err, checkpoint.ErrDecrypt) || got != c.want || !c.refused && err != nil {
			t.Errorf("%s: %q, %v", c.name, got, err)
		}
		if err != nil && (strings.Contains(err.Error(), "1:x") || !strings.Contains(err.Error(), "thread t")) {
			t.Errorf("%s: error %q shows the value or not the place", c.name, err)
		}
	}
}
