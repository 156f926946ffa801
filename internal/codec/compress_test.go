package codec

import (
	"bytes"
	"compress/flate"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// deflate is raw DEFLATE of s at level, with no header: what a writer
// other than Compress may produce.
func deflate(t testing.TB, s string, level int) string {
	t.Helper()
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func zform(plain, data string) string {
	return "z" + strconv.Itoa(len(plain)) + ":" + data
}

func random(n int, seed int64) string {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return string(b)
}

func TestCompressRoundTrip(t *testing.T) {
	text := Pack("msgpack", strings.Repeat("the agent calls a tool ", 100))
	noise := Pack("bytes", random(4096, 1))
	for _, c := range []struct {
		name       string
		plain      string
		level, min int
		compressed bool
	}{
		{"text over the threshold", text, 6, 512, true},
		{"text at the threshold", text, 6, len(text), true},
		{"text one byte under the threshold", text, 6, len(text) + 1, false},
		{"text, fastest level", text, MinLevel, 1, true},
		{"text, best level", text, MaxLevel, 1, true},
		{"incompressible data stays plain", noise, 9, 1, false},
		{"short value: the header costs more than it saves", Pack("json", "[1,2,3]"), 6, 1, false},
		{"empty (a version without a value)", "", 6, 0, false},
		{"level 0 is no compression", text, 0, 1, false},
		{"a level past 9 is no compression", text, 10, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Compress(c.plain, c.level, c.min)
			if IsCompressed(got) != c.compressed {
				t.Fatalf("compressed = %v, want %v (%d -> %d bytes)", IsCompressed(got), c.compressed, len(c.plain), len(got))
			}
			if !c.compressed && got != c.plain {
				t.Fatalf("a value left plain changed: %q", got)
			}
			if c.compressed && len(got) >= len(c.plain) {
				t.Fatalf("compressed %d bytes to %d", len(c.plain), len(got))
			}
			back, err := Decompress(got)
			if err != nil || back != c.plain {
				t.Fatalf("Decompress = %d bytes, %v; want the %d bytes compressed", len(back), err, len(c.plain))
			}
		})
	}
}

func TestDecompressRefuses(t *testing.T) {
	plain := Pack("msgpack", strings.Repeat("abc", 400))
	data := deflate(t, plain, 6)
	zeros := deflate(t, "5:bytes"+strings.Repeat("\x00", 1<<20), 9)
	for _, c := range []struct{ name, stored string }{
		{"no length", "z"},
		{"no colon", "z12"},
		{"empty length", "z:" + data},
		{"zero length", "z0:" + data},
		{"leading zero", "z0" + strconv.Itoa(len(plain)) + ":" + data},
		{"negative length", "z-5:" + data},
		{"length too short", "z" + strconv.Itoa(len(plain)-1) + ":" + data},
		{"length too long", "z" + strconv.Itoa(len(plain)+1) + ":" + data},
		{"length past MaxPlainBytes", "z" + strconv.Itoa(MaxPlainBytes+1) + ":" + strings.Repeat("x", MaxPlainBytes/maxRatio+10)},
		{"length past what the data can hold", "z" + strconv.Itoa(maxRatio*len(zeros)+maxRatio) + ":" + zeros},
		{"truncated data", zform(plain, data[:len(data)-3])},
		{"no data", zform(plain, "")},
		{"bytes after the end", zform(plain, data+"x")},
		{"not DEFLATE", zform(plain, strings.Repeat("\xff", 64))},
		{"compressed twice", zform(zform(plain, data), deflate(t, zform(plain, data), 6))},
		{"plain form is not a typed value", zform("hello", deflate(t, "hello", 6))},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := Decompress(c.stored); err == nil {
				t.Fatalf("Decompress accepted it: %d bytes", len(got))
			}
			if _, _, err := UnpackValue(c.stored); err == nil {
				t.Fatal("UnpackValue accepted it")
			}
		})
	}
	// The bound is DEFLATE's own: the most compressible data stays within it.
	if got, err := Decompress(zform("5:bytes"+strings.Repeat("\x00", 1<<20), zeros)); err != nil || len(got) != 7+1<<20 {
		t.Fatalf("a MiB of zeros (%d bytes of DEFLATE): %d bytes, %v", len(zeros), len(got), err)
	}
}

func TestUnpackValueReadsBothForms(t *testing.T) {
	plain := Pack("msgpack", strings.Repeat("xyz", 300))
	for _, stored := range []string{plain, Compress(plain, 6, 1), zform(plain, deflate(t, plain, 1)), zform(plain, deflate(t, plain, flate.HuffmanOnly))} {
		typ, data, err := UnpackValue(stored)
		if err != nil || typ != "msgpack" || data != strings.Repeat("xyz", 300) {
			t.Errorf("UnpackValue(%.12q…) = %q, %d bytes, %v", stored, typ, len(data), err)
		}
	}
	if _, _, err := UnpackValue("nope"); err == nil {
		t.Error("UnpackValue accepted a value without a type")
	}
}

// FuzzDecompress: no input makes Decompress panic or return more than it
// claims, and what it accepts is a typed value that compresses back to
// something it reads the same.
func FuzzDecompress(f *testing.F) {
	plain := Pack("msgpack", strings.Repeat("the agent ", 60))
	f.Add(Compress(plain, 6, 1))
	f.Add(Compress(plain, 1, 1))
	f.Add(zform(plain, deflate(f, plain, 9)[:20]))
	f.Add("z5:\x00\x00\x00")
	f.Add(plain)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Decompress(s)
		if err != nil {
			return
		}
		if !IsCompressed(s) {
			if got != s {
				t.Fatalf("a plain value changed")
			}
			return
		}
		if n, _, _ := CutLen(s[1:]); len(got) != n || got[0] < '1' || got[0] > '9' {
			t.Fatalf("Decompress(%q) = %q: not the length it claims, or not typed", s, got)
		}
		if back, err := Decompress(Compress(got, 6, 1)); err != nil || back != got {
			t.Fatalf("recompressed: %q, %v", back, err)
		}
	})
}

func BenchmarkCompress(b *testing.B) {
	plain := Pack("msgpack", strings.Repeat("the agent calls a tool with arguments and reads its result ", 200))
	for _, level := range []int{1, 6} {
		b.Run("level="+strconv.Itoa(level), func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = Compress(plain, level, 1)
			}
		})
	}
	b.Run("decompress", func(b *testing.B) {
		stored := Compress(plain, 6, 1)
		b.SetBytes(int64(len(plain)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Decompress(stored); err != nil {
				b.Fatal(err)
			}
		}
	})
}
