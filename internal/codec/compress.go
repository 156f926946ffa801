package codec

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/seal"
)

// Compressed stored values (docs/storage-format.md, "Stored values"). A
// stored value is "" (a version without a value), pack(type, bytes), whose
// first byte is a digit 1-9 (a type is 1 to 64 bytes), or the compressed
// form of such a pack:
//
//	"z" len(plain) ":" rawDEFLATE(plain)
//
// with len(plain) in decimal without leading zeros. Nothing else starts with
// "z", so a reader tells the forms apart by the first byte, whatever options
// the writer had.
const (
	// CompressedTag is the first byte of a compressed stored value.
	CompressedTag = 'z'
	// MaxPlainBytes bounds the plain form of a compressed value (512 MiB,
	// Redis's largest string by default): writers leave larger values
	// plain, readers refuse a compressed value that claims more.
	MaxPlainBytes = 512 << 20
	// maxRatio is DEFLATE's largest expansion: a 258-byte match coded in 2
	// bits. A compressed value claiming more than maxRatio bytes per byte
	// of DEFLATE data cannot be valid, so a reader refuses it before
	// allocating what it claims.
	maxRatio = 1032
	// MinLevel and MaxLevel bound the DEFLATE levels Compress takes.
	MinLevel = flate.BestSpeed
	MaxLevel = flate.BestCompression
)

// errNotPlain is the error of a compressed value whose plain form is not a
// pack(type, bytes): compressed again, empty, or something else.
var errNotPlain = errors.New("compressed value: the plain form is not a typed value")

// compressor is a DEFLATE writer of one level with its output buffer, kept
// for reuse: a flate.Writer holds about 1 MB of state.
type compressor struct {
	w   *flate.Writer
	buf bytes.Buffer
}

var compressors [MaxLevel + 1]sync.Pool

// Compress returns the stored form of plain (a pack(type, bytes)): its
// compressed form, DEFLATE at level (MinLevel to MaxLevel), when plain is at
// least minBytes long, at most MaxPlainBytes, and the compressed form is
// shorter; otherwise plain itself. The result depends on plain, level and
// minBytes only.
func Compress(plain string, level, minBytes int) string {
	if len(plain) < minBytes || len(plain) > MaxPlainBytes || plain == "" || level < MinLevel || level > MaxLevel {
		return plain
	}
	c, _ := compressors[level].Get().(*compressor)
	if c == nil {
		c = &compressor{}
		c.w, _ = flate.NewWriter(&c.buf, level) // level is valid: no error
	}
	defer compressors[level].Put(c)
	c.buf.Reset()
	c.buf.WriteByte(CompressedTag)
	c.buf.WriteString(strconv.Itoa(len(plain)))
	c.buf.WriteByte(':')
	c.w.Reset(&c.buf)
	_, _ = io.WriteString(c.w, plain) // a bytes.Buffer does not fail
	_ = c.w.Close()
	if c.buf.Len() >= len(plain) {
		return plain
	}
	out := c.buf.String()
	if c.buf.Cap() > 1<<20 {
		c.buf = bytes.Buffer{} // do not keep a large value's buffer in the pool
	}
	return out
}

// IsCompressed reports whether stored is in the compressed form.
func IsCompressed(stored string) bool {
	return stored != "" && stored[0] == CompressedTag
}

var decompressors sync.Pool

// Decompress returns the plain form of a stored value: stored itself when
// it is not compressed, else the bytes its DEFLATE data inflates to. It
// refuses, with an error and before inflating, a length over MaxPlainBytes
// or over what the data could hold; and a stream that is not valid raw
// DEFLATE, does not inflate to exactly the length it claims, has bytes after
// its end, or whose plain form is not a typed value.
func Decompress(stored string) (string, error) {
	if !IsCompressed(stored) {
		return stored, nil
	}
	n, data, ok := CutLen(stored[1:])
	if !ok || n == 0 {
		return "", errors.New("compressed value: malformed length")
	}
	if n > MaxPlainBytes || n/maxRatio > len(data) { // n/maxRatio: no overflow on 32-bit ints
		return "", fmt.Errorf("compressed value: %d bytes of data cannot hold %d bytes", len(data), n)
	}
	src := strings.NewReader(data)
	r, _ := decompressors.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return "", fmt.Errorf("compressed value: %w", err)
	}
	defer decompressors.Put(r)
	out := make([]byte, n)
	if _, err := io.ReadFull(r, out); err != nil {
		return "", fmt.Errorf("compressed value: inflating %d bytes: %w", n, err)
	}
	var one [1]byte
	if k, err := io.ReadFull(r, one[:]); k != 0 || err != io.EOF {
		if k != 0 {
			err = errors.New("longer than its length")
		}
		return "", fmt.Errorf("compressed value: %w", err)
	}
	if src.Len() != 0 {
		return "", fmt.Errorf("compressed value: %d bytes after the end of the data", src.Len())
	}
	if out[0] < '1' || out[0] > '9' {
		return "", errNotPlain
	}
	return string(out), nil
}

// UnpackValue splits a stored value, compressed or not, into its type and
// bytes; an encrypted one (OpenValue opens it) is refused with an error
// wrapping checkpoint.ErrDecrypt. The empty value (a version without a value) is not one: callers
// handle it first.
func UnpackValue(stored string) (typ, data string, err error) {
	if seal.IsSealed(stored) {
		return "", "", fmt.Errorf("%w: an encrypted value read without its keyring", checkpoint.ErrDecrypt)
	}
	plain, err := Decompress(stored)
	if err != nil {
		return "", "", err
	}
	var parts [2]string // type, data
	if !Unpack(plain, parts[:]) {
		return "", "", errors.New("value without a type")
	}
	return parts[0], parts[1], nil
}

// LoadValue decodes a stored value, compressed or not, with ser: the one
// decoder of stored values, for the saver's reads and the stream's events.
// Its errors are for the caller to wrap with its own sentinel.
func LoadValue(ser checkpoint.Serializer, stored string) (any, error) {
	typ, data, err := UnpackValue(stored)
	if err != nil {
		return nil, err
	}
	v, err := checkpoint.LoadString(ser, typ, data)
	if err != nil {
		return nil, fmt.Errorf("value of type %q: %w", typ, err)
	}
	return v, nil
}
