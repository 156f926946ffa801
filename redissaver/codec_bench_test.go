package redissaver

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

// benchMessages is a message list of about size bytes of msgpack: words
// drawn at random from a vocabulary of 200, which DEFLATE shortens about
// as much as English text (2 to 3 times), unlike bench/'s periodic text.
func benchMessages(size int) []any {
	r := rand.New(rand.NewSource(1))
	vocab := make([]string, 200)
	for i := range vocab {
		b := make([]byte, 2+r.Intn(8))
		for j := range b {
			b[j] = byte('a' + r.Intn(26))
		}
		vocab[i] = string(b)
	}
	var msgs []any
	for n := 0; n < size; n += 250 {
		var b strings.Builder
		for b.Len() < 200 {
			b.WriteString(vocab[r.Intn(len(vocab))])
			b.WriteByte(' ')
		}
		msgs = append(msgs, map[string]any{"type": "ai", "id": fmt.Sprintf("msg-%06d", n), "content": b.String()})
	}
	return msgs
}

// BenchmarkValueCodec is the client CPU compression and encryption add to a
// Put (encoding a changed channel's value) and to a GetTuple (decoding it),
// for a 12 KB message list, without Redis.
func BenchmarkValueCodec(b *testing.B) {
	val := benchMessages(12 << 10)
	ring, err := checkpoint.NewKeyring("k1", map[string][]byte{"k1": make([]byte, checkpoint.KeySize)})
	if err != nil {
		b.Fatal(err)
	}
	at := channelPlace("thread-1", "", "messages", "00000000000000000000000000000002.0.243798")
	for _, c := range []struct {
		name string
		comp Compression
		enc  *checkpoint.Keyring
	}{
		{"off", Compression{}, nil},
		{"level=1", Compression{Enabled: true, Level: 1}, nil},
		{"level=6", Compression{Enabled: true}, nil},
		{"encrypted", Compression{}, ring},
		{"level=1+encrypted", Compression{Enabled: true, Level: 1}, ring},
	} {
		s := unitSaver(b, Options{Compression: c.comp, Encryption: c.enc})
		stored, err := s.encodeValue(ctxBG, at, val)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("encode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.encodeValue(ctxBG, at, val); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(stored)), "stored-B")
		})
		b.Run("decode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.decodeValue(ctxBG, at, stored); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
