package checkpoint

import (
	"bytes"
	"io"

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
//
// The reader allocates per value, not per byte: LoadsTyped copies data into
// one string, LoadsTypedString (see StringLoader) takes it as it is, and
// every string of the value, map keys included, is a substring of it. A
// string of the value that is kept keeps the whole of data alive.
type MsgpackSerializer struct{}

var (
	_ Serializer   = MsgpackSerializer{}
	_ StringLoader = MsgpackSerializer{}
)

// DumpsTyped encodes v; see MsgpackSerializer.
func (MsgpackSerializer) DumpsTyped(v any) (string, []byte, error) {
	return dumpsTyped(v, TagMsgpack, encodeMsgpack)
}

// LoadsTyped decodes data written with the type tag typ; see
// MsgpackSerializer.
func (MsgpackSerializer) LoadsTyped(typ string, data []byte) (any, error) {
	return loadsTyped(typ, string(data))
}

// LoadsTypedString decodes data as LoadsTyped decodes the same bytes, without
// copying them; see StringLoader.
func (MsgpackSerializer) LoadsTypedString(typ, data string) (any, error) {
	return loadsTyped(typ, data)
}

// encodeMsgpack encodes v with encodeMsgpackFast, and with
// encodeMsgpackReflect when that refuses v, so that errors are reported as
// they always were.
func encodeMsgpack(v any) ([]byte, error) {
	if data, ok := encodeMsgpackFast(v); ok {
		return data, nil
	}
	return encodeMsgpackReflect(v)
}

// encodeMsgpackReflect is the reference encoding: checkEncodable, then
// vmihailenco/msgpack/v5 configured by newMsgpackEncoder. encodeMsgpackFast
// writes the same bytes.
func encodeMsgpackReflect(v any) ([]byte, error) {
	if err := checkEncodable(v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := newMsgpackEncoder(&buf).Encode(v); err != nil {
		return nil, serWrap("msgpack encode", err)
	}
	return buf.Bytes(), nil
}

// newMsgpackEncoder returns a msgpack Encoder writing to w with the options
// of the storage format: compact integers, sorted map keys, structs as maps
// keyed by their msgpack, else json, tag.
func newMsgpackEncoder(w io.Writer) *msgpack.Encoder {
	enc := msgpack.NewEncoder(w)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	enc.UseArrayEncodedStructs(false)
	enc.SetCustomStructTag("json")
	return enc
}
