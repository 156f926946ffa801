package checkpoint

import (
	"fmt"
	"math"
	"time"
)

// decodeMsgpack decodes exactly one MessagePack value filling data.
//
// It reads from a string so that it allocates per value, not per byte:
// every string of the result (map keys included) is a substring of data,
// sharing its memory, so any one of them kept keeps the whole of data
// alive. Binary values are copied, as a []byte must not share memory with
// anything.
//
// It is the one MessagePack reader, rather than vmihailenco/msgpack/v5's
// Decoder, because that one trusts declared lengths and depth: it
// allocates an array's declared length before reading its elements (4 GiB
// for the 5 bytes dd10000000) and recurses without a limit (a value nested
// 20 million times overflows the goroutine stack, a fatal error), so
// corrupted or hostile bytes read from Redis could end the process.
func decodeMsgpack(data string) (any, error) {
	r := mpReader{s: data}
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if r.off != len(r.s) {
		return nil, serErr("msgpack decode: %d trailing bytes after value", len(r.s)-r.off)
	}
	return v, nil
}

// mpReader reads MessagePack values from s, starting at off.
type mpReader struct {
	s   string
	off int
}

func (r *mpReader) remaining() int { return len(r.s) - r.off }

// next returns the next n bytes, or an error when fewer remain.
func (r *mpReader) next(n int) (string, error) {
	if n < 0 || n > r.remaining() {
		return "", serErr("msgpack decode: truncated data at offset %d", r.off)
	}
	p := r.s[r.off : r.off+n]
	r.off += n
	return p, nil
}

// uint reads a big-endian unsigned integer of size bytes (1, 2, 4 or 8).
func (r *mpReader) uint(size int) (uint64, error) {
	p, err := r.next(size)
	if err != nil {
		return 0, err
	}
	return bigEndian(p), nil
}

// bigEndian reads p, at most 8 bytes, as a big-endian unsigned integer.
func bigEndian(p string) uint64 {
	var u uint64
	for i := 0; i < len(p); i++ {
		u = u<<8 | uint64(p[i])
	}
	return u
}

// length reads a length of size bytes and checks that at least
// length*perItem bytes remain, so that nothing is allocated for data that
// is not there.
func (r *mpReader) length(size, perItem int) (int, error) {
	u, err := r.uint(size)
	if err != nil {
		return 0, err
	}
	if u > uint64(r.remaining()/perItem) {
		return 0, serErr("msgpack decode: length %d exceeds the remaining %d bytes", u, r.remaining())
	}
	return int(u), nil
}

// strLen reads the header of a string whose first byte is c, if it is one.
func (r *mpReader) strLen(c byte) (n int, ok bool, err error) {
	switch {
	case c >= 0xa0 && c <= 0xbf:
		return int(c & 0x1f), true, nil
	case c == 0xd9 || c == 0xda || c == 0xdb: // str 8/16/32
		n, err := r.length(1<<(c-0xd9), 1)
		return n, true, err
	}
	return 0, false, nil
}

func (r *mpReader) value(depth int) (any, error) {
	p, err := r.next(1)
	if err != nil {
		return nil, err
	}
	c := p[0]
	if n, ok, err := r.strLen(c); ok {
		if err != nil {
			return nil, err
		}
		s, err := r.next(n)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c >= 0x90 && c <= 0x9f:
		return r.array(int(c&0x0f), depth)
	case c >= 0x80 && c <= 0x8f:
		return r.mapping(int(c&0x0f), depth)
	}
	switch c {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6: // bin 8/16/32
		n, err := r.length(1<<(c-0xc4), 1)
		if err != nil {
			return nil, err
		}
		b, _ := r.next(n)
		return append([]byte{}, b...), nil
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32
		n, err := r.length(1<<(c-0xc7), 1)
		if err != nil {
			return nil, err
		}
		return r.ext(n)
	case 0xca:
		u, err := r.uint(4)
		return float64(math.Float32frombits(uint32(u))), err
	case 0xcb:
		u, err := r.uint(8)
		return math.Float64frombits(u), err
	case 0xcc, 0xcd, 0xce, 0xcf: // uint 8/16/32/64
		u, err := r.uint(1 << (c - 0xcc))
		if err != nil {
			return nil, err
		}
		if u > math.MaxInt64 {
			return u, nil
		}
		return int64(u), nil
	case 0xd0, 0xd1, 0xd2, 0xd3: // int 8/16/32/64
		size := 1 << (c - 0xd0)
		u, err := r.uint(size)
		if err != nil {
			return nil, err
		}
		shift := 64 - 8*size // sign-extend
		return int64(u<<shift) >> shift, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1/2/4/8/16
		return r.ext(1 << (c - 0xd4))
	case 0xdc, 0xdd: // array 16/32
		n, err := r.length(2<<(c-0xdc), 1)
		if err != nil {
			return nil, err
		}
		return r.array(n, depth)
	case 0xde, 0xdf: // map 16/32
		n, err := r.length(2<<(c-0xde), 2)
		if err != nil {
			return nil, err
		}
		return r.mapping(n, depth)
	}
	return nil, serErr("msgpack decode: invalid code 0x%02x at offset %d", c, r.off-1)
}

func (r *mpReader) array(n, depth int) (any, error) {
	if depth >= maxDepth {
		return nil, serErr("msgpack decode: nesting deeper than %d", maxDepth)
	}
	if n > r.remaining() {
		return nil, serErr("msgpack decode: array of %d exceeds the remaining %d bytes", n, r.remaining())
	}
	a := make([]any, n)
	for i := range a {
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a[i] = v
	}
	return a, nil
}

func (r *mpReader) mapping(n, depth int) (any, error) {
	if depth >= maxDepth {
		return nil, serErr("msgpack decode: nesting deeper than %d", maxDepth)
	}
	if n > r.remaining()/2 {
		return nil, serErr("msgpack decode: map of %d exceeds the remaining %d bytes", n, r.remaining())
	}
	m := make(map[string]any, n)
	for range n {
		key, err := r.mapKey(depth)
		if err != nil {
			return nil, err
		}
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	return m, nil
}

// mapKey reads a map key as a string: a string key as it is; a binary key
// by its bytes; any other key with fmt.Sprint of its decoded value.
func (r *mpReader) mapKey(depth int) (string, error) {
	if r.remaining() > 0 {
		c := r.s[r.off]
		r.off++
		if n, ok, err := r.strLen(c); ok {
			if err != nil {
				return "", err
			}
			return r.next(n)
		}
		r.off-- // not a string: read it as a value
	}
	k, err := r.value(depth + 1)
	if err != nil {
		return "", err
	}
	switch key := k.(type) {
	case string:
		return key, nil
	case []byte:
		return string(key), nil
	}
	return fmt.Sprint(k), nil
}

// ext reads the type byte and n bytes of an extension value. Only the
// timestamp extension (type -1) is supported.
func (r *mpReader) ext(n int) (any, error) {
	p, err := r.next(1)
	if err != nil {
		return nil, err
	}
	typ := int8(p[0])
	b, err := r.next(n)
	if err != nil {
		return nil, err
	}
	if typ != -1 {
		return nil, serErr("msgpack decode: unsupported extension type %d", typ)
	}
	var sec int64
	var nsec uint64
	switch n {
	case 4:
		sec = int64(bigEndian(b))
	case 8:
		u := bigEndian(b)
		sec, nsec = int64(u&(1<<34-1)), u>>34
	case 12:
		nsec = bigEndian(b[:4])
		sec = int64(bigEndian(b[4:]))
	default:
		return nil, serErr("msgpack decode: timestamp of %d bytes", n)
	}
	if nsec >= 1e9 {
		return nil, serErr("msgpack decode: timestamp nanoseconds %d out of range", nsec)
	}
	return time.Unix(sec, int64(nsec)).UTC(), nil
}
