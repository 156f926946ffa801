package checkpoint

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// MsgpackSerializer is the default Serializer. It encodes values with
// MessagePack (github.com/vmihailenco/msgpack/v5) under the type tag
// "msgpack". Its zero value is ready to use and it is safe for concurrent
// use.
//
// DumpsTyped writes nil with the tag "null" and no data, a top-level []byte
// with the tag "bytes" and the bytes themselves, a DeltaSnapshot (or a
// non-nil *DeltaSnapshot) with "delta/" before the tag of its value, and any
// other value as MessagePack: integers in their smallest form, map keys
// sorted, Go structs as maps keyed by their msgpack tag, else their json tag,
// else their field name, time.Time as the MessagePack timestamp extension. A
// value msgpack cannot encode (a channel, a func), one nested deeper than
// about 10000 levels or cyclic, and a DeltaSnapshot holding another give an
// error wrapping ErrSerialization.
//
// LoadsTyped accepts "null", "bytes", "msgpack" and "json" (so a store can
// switch between MsgpackSerializer and JSONSerializer and still read what it
// wrote before), each optionally prefixed once by "delta/", and returns a
// DeltaSnapshot for the prefixed tags. It decodes MessagePack with its own
// strict reader, never with reflection, and normalises exactly as
// JSONSerializer does: integers come back as int64 (as uint64 above
// math.MaxInt64), floats (32- or 64-bit) as float64, arrays as []any, maps as
// map[string]any, strings as string (bytes kept as they are, invalid UTF-8
// included), binary values as []byte, timestamps as time.Time in UTC. A map
// key that is not a string is converted to one: binary keys by their bytes,
// any other key with fmt.Sprint of its decoded value (so the integer key 1
// becomes "1", as encoding/json writes it); when two keys convert to the same
// string the last one wins. Unknown tags, truncated or corrupted data,
// trailing bytes, extension types other than timestamps and nesting deeper
// than 10000 levels give an error wrapping ErrSerialization. Every declared
// length is checked against the bytes that remain before anything is
// allocated, so hostile input cannot make it allocate more than a small
// multiple of its own size. A differential fuzz target
// (FuzzMsgpackDifferential) checks the reader against
// vmihailenco/msgpack/v5's own decoder: on the same bytes both succeed with
// structurally equal values or both fail, except for timestamps whose
// nanoseconds are 1e9 or more, which the MessagePack spec forbids and only
// this reader refuses.
type MsgpackSerializer struct{}

var _ Serializer = MsgpackSerializer{}

// DumpsTyped encodes v; see MsgpackSerializer.
func (MsgpackSerializer) DumpsTyped(v any) (string, []byte, error) {
	return dumpsTyped(v, TagMsgpack, encodeMsgpack)
}

// LoadsTyped decodes data written with the type tag typ; see
// MsgpackSerializer.
func (MsgpackSerializer) LoadsTyped(typ string, data []byte) (any, error) {
	return loadsTyped(typ, data)
}

func encodeMsgpack(v any) ([]byte, error) {
	if err := checkEncodable(v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	enc.UseArrayEncodedStructs(false)
	enc.SetCustomStructTag("json")
	if err := enc.Encode(v); err != nil {
		return nil, serWrap("msgpack encode", err)
	}
	return buf.Bytes(), nil
}

// decodeMsgpack decodes exactly one MessagePack value filling data.
func decodeMsgpack(data []byte) (any, error) {
	r := mpReader{b: data}
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if r.off != len(r.b) {
		return nil, serErr("msgpack decode: %d trailing bytes after value", len(r.b)-r.off)
	}
	return v, nil
}

// mpReader reads MessagePack values from b, starting at off.
type mpReader struct {
	b   []byte
	off int
	// keys interns map keys: the same few keys repeat in every message of
	// a list, and each would otherwise be a new string.
	keys map[string]string
}

// mapKey reads a map key that is a string without boxing it, interned; ok
// is false when the key is not a string (the caller reads it as a value).
func (r *mpReader) mapKey() (key string, ok bool, err error) {
	if r.remaining() < 1 {
		return "", false, nil
	}
	c := r.b[r.off]
	var n int
	switch {
	case c >= 0xa0 && c <= 0xbf:
		r.off++
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xda || c == 0xdb:
		r.off++
		size := 1 << (c - 0xd9)
		u, err := r.uint(size)
		if err != nil {
			return "", false, err
		}
		if u > uint64(r.remaining()) {
			return "", false, serErr("msgpack decode: string of %d exceeds the remaining %d bytes", u, r.remaining())
		}
		n = int(u)
	default:
		return "", false, nil
	}
	b, err := r.next(n)
	if err != nil {
		return "", false, err
	}
	if k, ok := r.keys[string(b)]; ok {
		return k, true, nil
	}
	if r.keys == nil {
		r.keys = make(map[string]string, 8)
	}
	k := string(b)
	if len(r.keys) < 1024 {
		r.keys[k] = k
	}
	return k, true, nil
}

func (r *mpReader) remaining() int { return len(r.b) - r.off }

// next returns the next n bytes, or an error when fewer remain.
func (r *mpReader) next(n int) ([]byte, error) {
	if n < 0 || n > r.remaining() {
		return nil, serErr("msgpack decode: truncated data at offset %d", r.off)
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

// uint reads a big-endian unsigned integer of size bytes (1, 2, 4 or 8).
func (r *mpReader) uint(size int) (uint64, error) {
	p, err := r.next(size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(p)), nil
	}
	return binary.BigEndian.Uint64(p), nil
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

func (r *mpReader) value(depth int) (any, error) {
	p, err := r.next(1)
	if err != nil {
		return nil, err
	}
	c := p[0]
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c >= 0xa0 && c <= 0xbf:
		return r.str(int(c & 0x1f))
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
	case 0xd9, 0xda, 0xdb: // str 8/16/32
		n, err := r.length(1<<(c-0xd9), 1)
		if err != nil {
			return nil, err
		}
		return r.str(n)
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

func (r *mpReader) str(n int) (any, error) {
	b, err := r.next(n)
	if err != nil {
		return nil, err
	}
	return string(b), nil
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
		if key, ok, err := r.mapKey(); err != nil {
			return nil, err
		} else if ok {
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m[key] = v
			continue
		}
		k, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		switch key := k.(type) {
		case string:
			m[key] = v
		case []byte:
			m[string(key)] = v
		default:
			m[fmt.Sprint(key)] = v
		}
	}
	return m, nil
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
		sec = int64(binary.BigEndian.Uint32(b))
	case 8:
		u := binary.BigEndian.Uint64(b)
		sec, nsec = int64(u&(1<<34-1)), u>>34
	case 12:
		nsec = uint64(binary.BigEndian.Uint32(b))
		sec = int64(binary.BigEndian.Uint64(b[4:]))
	default:
		return nil, serErr("msgpack decode: timestamp of %d bytes", n)
	}
	if nsec >= 1e9 {
		return nil, serErr("msgpack decode: timestamp nanoseconds %d out of range", nsec)
	}
	return time.Unix(sec, int64(nsec)).UTC(), nil
}
